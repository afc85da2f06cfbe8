#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "pipeline/dry_run.hpp"
#include "report/progress.hpp"
#include "sandbox/container.hpp"
#include "sandbox/in_pod.hpp"
#include "spec/platform_profile.hpp"

extern char** environ;

namespace preflight::cli {

namespace {

struct RunArgs : JobOptions {
  SandboxArgs sandbox;
  std::string timeout;
  int steps = 0;
  bool quiet = false;
  bool no_harness = false;
  bool run_anyway = false;
  bool in_pod = false;
  bool stage = false;
};

int run(const RunArgs& args) {
  if (args.in_pod) {
    if (auto status = sandbox::check_in_pod(); !status) return report_error(status.error());
  } else if (auto exit_status = enter_user_namespace()) {
    return *exit_status;
  }
  pipeline::DryRunOptions options;
  options.job_file = args.job;
  auto read = read_options(args);
  if (!read) return report_error(read.error());
  options.read = std::move(*read);
  if (!args.platform.empty()) options.platform = args.platform;
  if (!args.image.empty()) options.image = args.image;
  if (args.in_pod) {
    if (!options.image) options.image = sandbox::kPodImage;
    std::vector<std::string> environment;
    for (char** entry = environ; *entry; ++entry) environment.emplace_back(*entry);
    options.image_config = sandbox::pod_image_config(environment);
  }
  auto seccomp = sandbox_seccomp(args.sandbox);
  if (!seccomp) return report_error(seccomp.error());
  options.seccomp = std::move(*seccomp);
  options.network = args.sandbox.network;
  if (args.steps > 0) options.steps = args.steps;
  options.harness = !args.no_harness;
  options.stop_on_static = !args.run_anyway;
  options.strict = args.strict;
  if (!args.timeout.empty()) {
    auto timeout = parse_duration(args.timeout);
    if (!timeout) return report_error(timeout.error().context("--timeout"));
    options.timeout = *timeout;
  }
  if (args.stage) {
    sandbox::InPod pod;
    auto staged = pipeline::stage_in_pod(options, {}, pod);
    return staged ? 0 : report_error(staged.error());
  }
  auto progress = report::progress_on_stderr(args.quiet);
  pipeline::Console console;
  console.progress = [&](const std::string& line) { progress->note(line); };
  if (progress->shows_steps()) console.step = [&](const std::string& what) { progress->step(what); };
  if (!args.quiet)
    console.job_output = [&](bool, std::string_view line) {
      progress->write_line(std::cerr, "  | " + std::string(line));
    };
  sandbox::Runc runc;
  sandbox::InPod in_pod;
  auto result = pipeline::dry_run(options, console,
                                  args.in_pod ? static_cast<sandbox::ContainerRuntime&>(in_pod) : runc);
  progress->clear();
  return finish_report(result, args);
}

}  // namespace

Command run_command() {
  return {"run", "Run the job as the platform would: its image, user, environment, mounts and limits",
          [](CLI::App& app) -> Action {
            auto args = std::make_shared<RunArgs>();
            add_job_options(app, *args);
            app.add_option("--steps", args->steps,
                           "batches per DataLoader loop (default: the job's dryrun.steps, 2)")
                ->check(CLI::PositiveNumber);
            app.add_option("--trace", args->trace,
                           "write the dry run's trace (Chrome Trace Event format, gzip) to FILE");
            app.add_option("--timeout", args->timeout, "stop the dry run after DURATION (e.g. 90s, 10m)");
            app.add_flag("-q,--quiet", args->quiet, "do not echo the job's output nor show a status line");
            app.add_flag(
                "--no-harness", args->no_harness,
                "run the job exactly as the platform would, without Preflight's harness: "
                "no clamping, stages or measurements; the verdict comes from the exit status and output");
            app.add_flag("--run-anyway", args->run_anyway,
                         "run the job even when the static checks find an error that holds whatever it does");
            app.add_flag(
                "--in-pod", args->in_pod,
                "run in this Kubernetes pod, on its own image and as its user, instead of in a container "
                "(docs/scale-out.md \"Kubernetes\")");
            add_sandbox_options(app, args->sandbox);
            // In a pod the sandbox is the pod's (its NetworkPolicy and RuntimeDefault seccomp).
            app.get_option("--in-pod")->excludes("--network")->excludes("--seccomp");
            app.add_flag(
                   "--stage", args->stage,
                   "with --in-pod: only fill the places the platform gives the job read-only, as the pod's "
                   "init container")
                ->needs("--in-pod");
            return [args] { return run(*args); };
          }};
}

}  // namespace preflight::cli
