// `preflight batch` on this machine (docs/cli.md "preflight batch"): each job runs as a child
// `preflight run`, at most N at once, with the one image cache they share (its entries locked,
// docs/images.md); each run writes its report.json and its output into the batch's reports
// folder, which pipeline/collect.hpp then reads back as `preflight collect` would.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "diagnosis/policies.hpp"
#include "report/batch_report.hpp"
#include "util/error.hpp"

namespace preflight::pipeline {

// What one dry run is taken to need in memory when the machine's memory bounds how many run at
// once: the largest of the jobs in docs/benchmarks.md "Many jobs at once" raised the machine's
// memory in use by 3.1 GiB.
inline constexpr std::uint64_t kBatchRunMemory = std::uint64_t{4} << 30;

// How many runs at once by default: one per core, fewer when MemAvailable (/proc/meminfo) does
// not hold kBatchRunMemory for each; at least one.
int default_parallel_runs();

enum class RunState { Waiting, Running, Done };

struct JobRun {
  std::filesystem::path job;
  std::filesystem::path report;  // NNN-NAME.json in the reports folder
  std::filesystem::path log;     // NNN-NAME.log: what the run printed
  RunState state = RunState::Waiting;
  int exit_status = -1;  // the run's; 128+N when signal N ended it
  std::chrono::steady_clock::time_point started;
  double seconds = 0;  // wall time, once done
};

struct BatchPlan {
  std::vector<std::filesystem::path> jobs;
  std::vector<std::string> run_args;  // given to every run after the job: --image, --platform, ...
  int parallel = 1;
  std::filesystem::path reports_dir;  // made when missing; must be empty
};

// Told when a run ends (`finished` points at it) and about once a second (`finished` null), so
// that a progress line can count and name the slowest run going on.
using BatchWatch = std::function<void(const std::vector<JobRun>& runs, const JobRun* finished)>;

// Runs the plan's jobs, each as `preflight run JOB --json REPORT RUN_ARGS...` with its output in
// its log, at most `parallel` at once, in the order given. A first SIGINT, SIGTERM or SIGHUP
// starts no more runs and is passed on to those going on (each in a process group of its own,
// so a terminal's Ctrl-C reaches them once, through this), which are waited for: then the error
// is Interrupted. Bad input: a reports folder that is not empty or cannot be made.
Result<std::vector<JobRun>> run_batch(const BatchPlan& plan, const BatchWatch& watch);

// The runs' reports read back, in the order of the runs. A run that left no report a reader
// accepts (it was killed, or died while writing it) gets one with verdict "error" saying how it
// ended and where its output is, written in its report's place so that a later `preflight
// collect` of the folder finds the same.
report::Batch read_batch(const std::vector<JobRun>& runs, const diagnosis::Policies& policies);

}  // namespace preflight::pipeline
