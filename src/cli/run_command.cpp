#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "pipeline/dry_run.hpp"
#include "spec/platform_profile.hpp"

namespace preflight::cli {

namespace {

struct RunArgs {
  std::string job = "job.yaml";
  std::string platform, image, json, timeout;
  int steps = 0;
  bool quiet = false;
  bool no_harness = false;
};

int run(const RunArgs& args) {
  pipeline::DryRunOptions options;
  options.job_file = args.job;
  if (!args.platform.empty()) options.platform = args.platform;
  if (!args.image.empty()) options.image = args.image;
  if (args.steps > 0) options.steps = args.steps;
  options.harness = !args.no_harness;
  if (!args.timeout.empty()) {
    auto timeout = spec::parse_duration(args.timeout);
    if (!timeout) return report_error(timeout.error().context("--timeout"));
    options.timeout = *timeout;
  }
  const bool color = report::use_color(STDERR_FILENO);
  pipeline::Console console;
  console.progress = [color](const std::string& line) {
    std::cerr << (color ? "\033[2mpreflight: " : "preflight: ") << line << (color ? "\033[0m\n" : "\n");
  };
  if (!args.quiet)
    console.job_output = [](bool, std::string_view line) { std::cerr << "  | " << line << "\n"; };
  auto result = pipeline::dry_run(options, console);
  if (!result) return report_error(result.error());
  report::print_summary(*result, std::cout, report::use_color(STDOUT_FILENO));
  if (!args.json.empty())
    if (auto written = report::write_json(*result, args.json); !written) return report_error(written.error());
  return report::exit_status_of(result->verdict);
}

}  // namespace

Command run_command() {
  return {"run", "Run the job as the platform would: its image, user, environment, mounts and limits",
          [](CLI::App& app) -> Action {
            auto args = std::make_shared<RunArgs>();
            app.add_option("job", args->job, "the job file")->capture_default_str();
            app.add_option("--platform", args->platform, "platform profile: a shipped name or a file");
            app.add_option("--image", args->image,
                           "image: built-in name, docker-archive:PATH, oci:PATH[:TAG], rootfs:PATH");
            app.add_option("--json", args->json, "write report.json v1 to FILE");
            app.add_option("--steps", args->steps,
                           "batches per DataLoader loop (default: the job's dryrun.steps, 2)")
                ->check(CLI::PositiveNumber);
            app.add_option("--timeout", args->timeout, "stop the dry run after DURATION (e.g. 90s, 10m)");
            app.add_flag("-q,--quiet", args->quiet, "do not echo the job's output");
            app.add_flag("--no-harness", args->no_harness,
                         "run the job exactly as the platform would, without Preflight's harness: "
                         "no clamping, stages or measurements; the verdict comes from the exit status and output");
            return [args] { return run(*args); };
          }};
}

}  // namespace preflight::cli
