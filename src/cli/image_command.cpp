#include <fstream>
#include <iostream>
#include <memory>

#include "check/image_diff.hpp"
#include "check/image_inspect.hpp"
#include "cli/command.hpp"
#include "image/image_store.hpp"
#include "pipeline/dry_run.hpp"
#include "sandbox/container.hpp"
#include "util/data_dir.hpp"

namespace preflight::cli {
namespace {

struct ImageArgs {
  std::string name;               // build: the built-in name; inspect, diff: any reference
  std::string other;              // diff: the second image
  std::vector<std::string> jobs;  // check, diff: job files to try on the image(s)
  bool if_missing = false;
  bool json = false;
};

void progress(const std::string& line) { std::cerr << "preflight: " << line << "\n"; }

image::ImageStore store() { return image::ImageStore(image::default_cache_dir(), data_dir() / "images"); }

int build(const ImageArgs& args) {
  if (args.if_missing) {
    // Without root, the unpack gives the files their image's owners in Preflight's user
    // namespace, as a run's unpack does: an entry is the same whichever command made it.
    if (auto exit_status = enter_user_namespace()) return *exit_status;
    // Resolving builds a missing image and unpacks it, and does nothing when both are done.
    auto ref = image::parse_image_ref(args.name, ".");
    if (!ref) return report_error(ref.error());
    if (ref->kind != image::ImageRef::Kind::Builtin)
      return report_error(Error::bad_input("\"" + args.name + "\" is not a built-in image name"));
    auto image = store().resolve(*ref, progress);
    if (!image) return report_error(image.error());
    std::cout << args.name << " " << image->digest << "\n";
    return 0;
  }
  auto digest = store().build(args.name, progress);
  if (!digest) return report_error(digest.error());
  std::cout << args.name << " " << *digest << "\n";
  return 0;
}

Result<check::ImageInspection> inspected(const std::string& text) {
  auto ref = image::parse_image_ref(text, ".");
  if (!ref) return std::move(ref).error();
  auto image = store().resolve(*ref, progress);
  if (!image) return std::move(image).error();
  sandbox::Runc runc;
  return check::inspect_image(*image, image::default_cache_dir(), runc);
}

// Each job's verdict on an image: its static checks, then (if they pass) its dry run.
std::vector<report::Report> run_jobs(const std::string& image_text, const std::vector<std::string>& jobs,
                                     int& status) {
  std::vector<report::Report> reports;
  sandbox::Runc runc;
  for (const auto& job : jobs) {
    pipeline::DryRunOptions options;
    options.job_file = job;
    options.image = image_text;
    auto result = pipeline::dry_run(options, {progress, nullptr, nullptr}, runc);
    if (!result) {
      status = std::max(status, report_error(result.error()));
      continue;
    }
    status = std::max(status, report::exit_status_of(result->verdict));
    reports.push_back(std::move(*result));
  }
  return reports;
}

void print_job_table(const std::string& image_text, const std::vector<report::Report>& reports) {
  std::cout << "jobs on " << image_text << ":\n";
  for (const auto& r : reports) {
    const model::Finding* first = nullptr;
    for (const auto& f : r.findings)
      if (f.severity == model::Severity::Error && !first) first = &f;
    std::cout << "  " << r.job_name << ": " << r.verdict;
    if (first) {
      std::cout << " — " << first->category;
      if (!first->stage.empty()) std::cout << " in stage " << first->stage;
      if (first->location.known()) std::cout << " at " << first->location.str();
      std::cout << ": " << first->message;
    }
    std::cout << "\n";
  }
}

int check_jobs(const ImageArgs& args) {
  if (auto exit_status = enter_user_namespace()) return *exit_status;
  int status = 0;
  auto reports = run_jobs(args.name, args.jobs, status);
  print_job_table(args.name, reports);
  return status;
}

int diff(const ImageArgs& args) {
  if (auto exit_status = enter_user_namespace())
    return *exit_status;  // the image's python runs in a container
  auto before = inspected(args.name);
  if (!before) return report_error(before.error());
  auto after = inspected(args.other);
  if (!after) return report_error(after.error());
  const auto changes = check::diff_images(*before, *after);
  if (args.json)
    std::cout << check::to_json(changes).dump(2) << "\n";
  else
    check::print_diff(changes, std::cout);
  if (args.jobs.empty()) return 0;
  // Which jobs pass on the first image and fail on the second, and the other way round.
  int before_status = 0, status = 0;
  auto on_before = run_jobs(args.name, args.jobs, before_status);
  auto on_after = run_jobs(args.other, args.jobs, status);
  print_job_table(args.other, on_after);
  for (const bool breaks : {true, false})
    for (const auto& after_report : on_after)
      for (const auto& before_report : on_before)
        if (before_report.job_name == after_report.job_name && (before_report.verdict == "pass") == breaks &&
            (after_report.verdict == "pass") != breaks)
          std::cout << (breaks ? "breaks on " + args.other
                               : "runs on " + args.other + ", not on " + args.name)
                    << ": " << after_report.job_name << "\n";
  return status;
}

int inspect(const ImageArgs& args) {
  if (auto exit_status = enter_user_namespace())
    return *exit_status;  // the image's python runs in a container
  auto inspection = inspected(args.name);
  if (!inspection) return report_error(inspection.error());
  if (args.json)
    std::cout << check::to_json(*inspection).dump(2) << "\n";
  else
    check::print_inspection(*inspection, std::cout);
  return 0;
}

}  // namespace

Command image_command() {
  return {"image", "Build, inspect and compare the images jobs run in", [](CLI::App& app) -> Action {
            auto args = std::make_shared<ImageArgs>();
            app.require_subcommand(1);
            auto* build_cmd =
                app.add_subcommand("build", "build a built-in image from its recipe, images/NAME.yaml");
            build_cmd->add_option("name", args->name, "the built-in image's name")->required();
            build_cmd->add_flag("--if-missing", args->if_missing,
                                "only when it is not built and unpacked yet");
            auto* inspect_cmd = app.add_subcommand(
                "inspect",
                "what an image offers jobs: OS, Python, distributions, frameworks, CUDA, configuration");
            inspect_cmd
                ->add_option("ref", args->name,
                             "built-in name, docker-archive:PATH, oci:PATH[:TAG] or rootfs:PATH")
                ->required();
            inspect_cmd->add_flag("--json", args->json, "print JSON (schema preflight.image/v1)");
            auto* diff_cmd = app.add_subcommand(
                "diff",
                "what changed between two images that matters to jobs: Python, distributions, environment");
            diff_cmd->add_option("before", args->name, "the image jobs run on now")->required();
            diff_cmd->add_option("after", args->other, "the image they would move to")->required();
            diff_cmd->add_flag("--json", args->json, "print JSON (schema preflight.image-diff/v1)");
            diff_cmd->add_option("--job", args->jobs,
                                 "job files to try on both images: which break on the second");
            auto* check_cmd = app.add_subcommand("check",
                                                 "would these jobs run on the image? Their static checks "
                                                 "and dry runs, one line each");
            check_cmd->add_option("ref", args->name, "the image")->required();
            check_cmd->add_option("--job", args->jobs, "job files (repeat --job)")->required();
            return [args, inspect_cmd, diff_cmd, check_cmd] {
              if (inspect_cmd->parsed()) return inspect(*args);
              if (diff_cmd->parsed()) return diff(*args);
              if (check_cmd->parsed()) return check_jobs(*args);
              return build(*args);
            };
          }};
}

}  // namespace preflight::cli
