#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/command.hpp"
#include "pipeline/run_files.hpp"
#include "report/ci_reports.hpp"
#include "sandbox/user_namespace.hpp"

namespace preflight::cli {

int report_error(const Error& error) {
  std::cerr << "preflight: error: " << error.str() << "\n";
  return error.exit_status();
}

std::optional<int> enter_user_namespace() {
  auto entered = sandbox::enter_user_namespace();
  if (!entered) return report_error(entered.error());
  return *entered;
}

void add_read_options(CLI::App& app, ReadArgs& args) {
  app.add_option("--as", args.as,
                 "the kind of job file, when its content does not say: job.yaml, pytorchjob, trainjob, "
                 "vertex, sagemaker, slurm");
  app.add_option("--code", args.code,
                 "the code folder of a job definition that names none (its code is in the image); default: "
                 "the current folder");
  app.add_option("--map", args.maps,
                 "CLOUD=LOCAL: a local copy or sample of data the platform has at CLOUD (s3://bucket/prefix, "
                 "gs://bucket, pvc://claim, a cluster folder of a Slurm script); repeatable")
      ->allow_extra_args(false);
  // One value each time (not the job file after it), as often as given.
  app.add_option("--allow", args.allow,
                 "a host folder the job file may name (code, inputs, image, profile) besides its own folder "
                 "tree; repeatable; default: $PREFLIGHT_ALLOW (folders separated by \":\")")
      ->allow_extra_args(false);
  app.add_option("--allow-registry", args.allow_registries,
                 "a registry (HOST[:PORT]) the job file may name docker:// images of; repeatable; default: "
                 "$PREFLIGHT_ALLOW_REGISTRY (separated by \",\"); never a loopback or link-local address")
      ->allow_extra_args(false);
}

Result<formats::ReadOptions> read_options(const ReadArgs& args) {
  formats::ReadOptions options;
  if (!args.as.empty()) {
    auto kind = formats::kind_named(args.as);
    if (!kind) return std::move(kind).error();
    options.as = *kind;
  }
  const std::filesystem::path here = std::filesystem::current_path();
  if (!args.code.empty()) options.code_dir = std::filesystem::absolute(args.code).lexically_normal();
  for (const auto& text : args.maps) {
    auto map = spec::parse_path_map(text, here);
    if (!map) return std::move(map).error();
    options.load.maps.push_back(std::move(*map));
  }
  // What the person running Preflight names is theirs to grant (the local sides of --code and
  // --map are granted where they are used).
  spec::HostGrant& grant = options.load.grant;
  grant = spec::environment_grant(here);
  for (const auto& folder : args.allow) grant.folders.push_back((here / folder).lexically_normal());
  grant.registries.insert(grant.registries.end(), args.allow_registries.begin(), args.allow_registries.end());
  return options;
}

std::vector<std::string> read_arguments(const formats::ReadOptions& options) {
  std::vector<std::string> args;
  if (options.as) args.insert(args.end(), {"--as", std::string(formats::kind_name(*options.as))});
  if (!options.code_dir.empty()) args.insert(args.end(), {"--code", options.code_dir.string()});
  for (const spec::PathMap& map : options.load.maps)
    args.insert(args.end(), {"--map", map.prefix + "=" + map.local.string()});
  for (const std::filesystem::path& folder : options.load.grant.folders)
    args.insert(args.end(), {"--allow", folder.string()});
  for (const std::string& registry : options.load.grant.registries)
    args.insert(args.end(), {"--allow-registry", registry});
  return args;
}

void add_job_options(CLI::App& app, JobOptions& options) {
  app.add_option("job", options.job,
                 "the job file: job.yaml, a Kubeflow PyTorchJob or TrainJob, a Vertex AI custom job, a "
                 "SageMaker estimator (its arguments or the Python that builds it) or a Slurm batch script")
      ->capture_default_str();
  add_read_options(app, options);
  app.add_option("--platform", options.platform, "platform profile: a shipped name or a file");
  app.add_option("--image", options.image,
                 "image: built-in name, docker-archive:PATH, oci:PATH[:TAG], rootfs:PATH, docker://REF, "
                 "docker-daemon:NAME, containers-storage:NAME, or a NAME in Docker's or Podman's store");
  app.add_option("--json", options.json, "write report.json v1 to FILE");
  app.add_option("--junit", options.junit, "write a JUnit XML test report to FILE");
  app.add_option("--sarif", options.sarif, "write a SARIF 2.1.0 log (for code scanning) to FILE");
  app.add_option("--html", options.html, "write the report as one self-contained HTML page to FILE");
  app.add_flag("--strict", options.strict,
               "treat the static checks' predictions as errors unless the dry run refutes them");
}

namespace {

Status write_sarif(std::span<const report::Report> reports, const std::string& file,
                   const std::filesystem::path& workspace) {
  const report::SarifTool tool{"Preflight", PREFLIGHT_VERSION, PREFLIGHT_HOMEPAGE_URL};
  // A job's output can hold bytes that are not UTF-8: they become U+FFFD rather than an exception.
  const auto text = report::to_sarif(reports, tool, workspace)
                        .dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  return report::write_report_file(file, text + "\n");
}

Status write_reports(const report::Report& report, const JobOptions& options,
                     const std::filesystem::path& workspace) {
  if (!options.json.empty())
    if (auto written = report::write_json(report, options.json); !written) return written;
  if (auto written = write_ci_files({&report, 1}, options.junit, options.sarif, workspace); !written)
    return written;
  if (!options.html.empty())
    if (auto written = pipeline::write_html(report, options.html); !written) return written;
  if (!options.trace.empty()) return pipeline::write_trace(report, options.trace);
  return Ok{};
}

}  // namespace

bool in_github_actions() {
  const char* actions = std::getenv("GITHUB_ACTIONS");
  return actions && std::string(actions) == "true";
}

std::filesystem::path github_workspace() {
  const char* workspace = std::getenv("GITHUB_WORKSPACE");
  if (!in_github_actions() || !workspace || !*workspace) return {};
  return std::filesystem::absolute(workspace);
}

Status write_ci_files(std::span<const report::Report> reports, const std::string& junit,
                      const std::string& sarif, const std::filesystem::path& workspace) {
  if (!junit.empty())
    if (auto written = report::write_report_file(junit, report::to_junit(reports)); !written) return written;
  if (!sarif.empty()) return write_sarif(reports, sarif, workspace);
  return Ok{};
}

int finish_report(const Result<report::Report>& result, const JobOptions& options) {
  if (!result) {
    // report.json says so too, so that the tools that merge many runs' reports (collect, a
    // Slurm array's, a Kubernetes Job's) count a job that could not run. A stopped run has none.
    if (!options.json.empty() && result.error().kind != ErrorKind::Interrupted) {
      report::Report failed = report::error_report(options.job, result.error());
      failed.platform = options.platform;
      failed.image_ref = options.image;
      (void)report::write_json(failed, options.json);  // the error on stderr says it all
    }
    return report_error(result.error());
  }
  report::print_summary(*result, std::cout, report::use_color(STDOUT_FILENO));
  const std::filesystem::path workspace = github_workspace();
  if (in_github_actions()) report::print_annotations(*result, workspace, std::cout);
  if (auto written = write_reports(*result, options, workspace); !written)
    return report_error(written.error());
  return report::exit_status_of(result->verdict);
}

void add_batch_outputs(CLI::App& app, BatchOutputs& outputs) {
  app.add_option("--json", outputs.json, "write the merged report (preflight.batch/v1) to FILE");
  app.add_option("--junit", outputs.junit, "write a JUnit XML test report, a suite per job, to FILE");
  app.add_option("--sarif", outputs.sarif, "write a SARIF 2.1.0 log of every job's findings to FILE");
}

int finish_batch(const report::Batch& batch, const BatchOutputs& outputs) {
  report::print_batch_summary(batch, std::cout, report::use_color(STDOUT_FILENO));
  const std::filesystem::path workspace = github_workspace();
  if (in_github_actions())
    for (const auto& one : batch.reports) report::print_annotations(one, workspace, std::cout);
  if (!outputs.json.empty()) {
    const std::string text =
        report::batch_json(batch).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (auto written = report::write_report_file(outputs.json, text); !written)
      return report_error(written.error());
  }
  if (auto written = write_ci_files(batch.reports, outputs.junit, outputs.sarif, workspace); !written)
    return report_error(written.error());
  return report::merged_exit_status(batch.reports);
}

int main_with_args(int argc, char** argv) {
  CLI::App app{"Preflight: run a deep-learning job as its platform would, before you submit it."};
  app.set_version_flag("--version", std::string("preflight ") + PREFLIGHT_VERSION);
  app.require_subcommand(1);
  const std::vector<Command> table = {
      run_command(),   check_command(),   platforms_command(), platform_command(), image_command(),
      cache_command(), explain_command(), init_command(),      show_command(),     estimate_command(),
      batch_command(), collect_command(), export_command(),    convert_command(),  completion_command()};
  std::vector<std::pair<CLI::App*, Action>> actions;
  for (const auto& command : table) {
    CLI::App* sub = app.add_subcommand(command.name, command.summary);
    actions.emplace_back(sub, command.define(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& done) {
    return app.exit(done);
  } catch (const CLI::ParseError& e) {
    std::cerr << "preflight: error: " << e.what() << "\n"
              << "Run 'preflight --help' for usage.\n";
    return 2;
  }
  for (auto& [sub, action] : actions) {
    if (!sub->parsed()) continue;
    // A failure no code path expected still unwinds, so that every mount, container and
    // folder is released by its owner on the way out, and is reported as Preflight's own.
    try {
      return action();
    } catch (const std::exception& e) {
      return report_error(Error::runtime(std::string("internal error: ") + e.what() +
                                         "; please report it with the command that led to it"));
    }
  }
  return 2;
}

}  // namespace preflight::cli
