// `preflight batch JOB... [-j N] [--shard I/N] [--reports DIR] [--image REF] [--platform P]
// [--json F] [--junit F] [--sarif F]`: many jobs' dry runs on this machine, at most N at once,
// merged into one summary and one set of CI files as `preflight collect` merges them (docs/cli.md
// "preflight batch").
#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "pipeline/batch.hpp"
#include "pipeline/job_list.hpp"
#include "report/progress.hpp"
#include "util/text.hpp"

namespace preflight::cli {
namespace {

namespace fs = std::filesystem;

struct BatchArgs : ReadArgs {
  SandboxArgs sandbox;
  std::vector<std::string> jobs;
  std::string platform, image, shard, reports, timeout;
  int parallel = 0;
  int steps = 0;
  bool strict = false;
  bool quiet = false;
  BatchOutputs outputs;
};

// What a run's exit status says, before its report is read.
const char* outcome_of(int exit_status) {
  switch (exit_status) {
    case 0:
      return "pass";
    case 1:
      return "fail";
    case 130:
    case 128 + SIGTERM:
      return "stopped";
    default:
      return "error";
  }
}

// A job as the user sees it: relative to the working folder when it lies in it.
std::string shown(const fs::path& job) {
  const auto relative = relative_within(job, fs::current_path());
  return relative ? relative->string() : job.string();
}

Result<fs::path> reports_folder(const std::string& given) {
  if (!given.empty()) return fs::absolute(given);
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = (tmp && *tmp ? std::string(tmp) : std::string("/tmp")) + "/preflight-batch-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    return Error::runtime("cannot make a folder for the batch's reports in " + pattern + ": " +
                          std::strerror(errno) + "; give one with --reports DIR");
  return fs::path(pattern);
}

int batch(BatchArgs& args) {
  auto jobs = pipeline::select_jobs(args.jobs, args.shard, fs::current_path());
  if (!jobs) return report_error(jobs.error());
  if (auto checked = pipeline::check_batch_options(args.platform, args.image); !checked)
    return report_error(checked.error());
  auto read = read_options(args);
  if (!read) return report_error(read.error());
  if (auto seccomp = sandbox_seccomp(args.sandbox); !seccomp) return report_error(seccomp.error());
  if (jobs->empty()) {
    // A CI matrix with more runners than jobs: this one has nothing to check.
    std::cout << "no job falls in shard " << args.shard << ": nothing to run\n";
    return 0;
  }
  auto policies = diagnosis::load_policies(diagnosis::shipped_rules_dir());
  if (!policies) return report_error(policies.error());
  auto reports_dir = reports_folder(args.reports);
  if (!reports_dir) return report_error(reports_dir.error());

  pipeline::BatchPlan plan;
  for (const fs::path& job : *jobs) plan.jobs.emplace_back(shown(job));
  plan.parallel = args.parallel > 0 ? args.parallel : pipeline::default_parallel_runs();
  plan.reports_dir = *reports_dir;
  const auto pass_on = [&](const char* option, const std::string& value) {
    if (value.empty()) return;
    plan.run_args.emplace_back(option);
    plan.run_args.push_back(value);
  };
  pass_on("--platform", args.platform);
  pass_on("--image", args.image);
  pass_on("--timeout", args.timeout);
  if (args.steps > 0) pass_on("--steps", std::to_string(args.steps));
  if (args.strict) plan.run_args.emplace_back("--strict");
  for (std::string& arg : read_arguments(*read)) plan.run_args.push_back(std::move(arg));
  for (std::string& arg : sandbox_arguments(args.sandbox)) plan.run_args.push_back(std::move(arg));

  auto progress = report::progress_on_stderr(args.quiet);
  // A line to keep: printed above the status line on a terminal, logged elsewhere.
  const auto keep = [&](const std::string& line) {
    if (progress->shows_steps())
      progress->write_line(std::cerr, line);
    else
      progress->note(line);
  };
  plan.parallel = std::min(plan.parallel, static_cast<int>(plan.jobs.size()));
  keep(fmt::format("{} job{}, {} at once; reports and output in {}", plan.jobs.size(),
                   plan.jobs.size() == 1 ? "" : "s", plan.parallel, plan.reports_dir.string()));
  const auto started = std::chrono::steady_clock::now();
  const auto watch = [&](const std::vector<pipeline::JobRun>& runs, const pipeline::JobRun* finished) {
    std::size_t done = 0, failed = 0, running = 0;
    const pipeline::JobRun* longest = nullptr;
    for (const auto& run : runs) {
      if (run.state == pipeline::RunState::Done) {
        ++done;
        failed += run.exit_status != 0;
      } else if (run.state == pipeline::RunState::Running) {
        ++running;
        if (!longest || run.started < longest->started) longest = &run;
      }
    }
    if (finished)
      keep(fmt::format("[{}/{}] {:<5} {} ({})", done, runs.size(), outcome_of(finished->exit_status),
                       finished->job.string(), human_duration(finished->seconds)));
    if (!progress->shows_steps()) return;
    std::string status =
        fmt::format("batch: {}/{} done, {} not passed, {} running", done, runs.size(), failed, running);
    if (longest)
      status += fmt::format(
          "; the longest {} ({})", longest->job.string(),
          human_duration(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - longest->started).count()));
    progress->step(status);
  };
  auto runs = pipeline::run_batch(plan, watch);
  progress->clear();
  if (!runs) return report_error(runs.error());
  const report::Batch merged = pipeline::read_batch(*runs, *policies);
  const int status = finish_batch(merged, args.outputs);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << fmt::format("{} of wall time, {} at once; each job's report and output are in {}\n",
                           human_duration(wall), plan.parallel, plan.reports_dir.string());
  return status;
}

}  // namespace

Command batch_command() {
  return {"batch", "Run many jobs' dry runs on this machine, several at once, and merge their reports",
          [](CLI::App& app) -> Action {
            auto args = std::make_shared<BatchArgs>();
            app.add_option("JOB", args->jobs,
                           "job files, folders searched for job.yaml (links are not followed), or list files "
                           "(a job per line)")
                ->required();
            app.add_option("-j,--parallel", args->parallel,
                           "run at most N at once (default: one per core, fewer when memory is short)")
                ->check(CLI::Range(1, 256));
            app.add_option("--shard", args->shard,
                           "run only shard I of N (from 1): a stable split of the jobs among N runners");
            app.add_option("--reports", args->reports,
                           "keep each job's report.json and output in DIR, new or empty (default: a new "
                           "folder in TMPDIR)");
            add_read_options(app, *args);
            app.add_option("--platform", args->platform, "run every job on this platform profile");
            app.add_option("--image", args->image,
                           "run every job on this image: a new image checked against every job");
            app.add_option("--steps", args->steps, "batches per DataLoader loop, as for preflight run")
                ->check(CLI::PositiveNumber);
            app.add_option("--timeout", args->timeout, "stop each dry run after DURATION (e.g. 90s, 10m)");
            app.add_flag("--strict", args->strict,
                         "treat the static checks' predictions as errors unless the dry run refutes them");
            add_sandbox_options(app, args->sandbox);
            app.add_flag("-q,--quiet", args->quiet, "show no progress");
            add_batch_outputs(app, args->outputs);
            return [args] { return batch(*args); };
          }};
}

}  // namespace preflight::cli
