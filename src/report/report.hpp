// The outcome of a run as the user sees it: verdict, stages, findings. Written as report.json
// v1 (the contract in docs/formats.md) and as a terminal summary.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "model/category.hpp"
#include "model/finding.hpp"
#include "util/error.hpp"

namespace preflight::report {

struct StageResult {
  std::string name;
  std::string status;  // passed | failed | not_reached | absent
  double seconds = 0;
};

// A value the harness changed so that the sampled run reaches every stage: an epoch or step
// count, or an explicit job.yaml `dryrun.args` override (docs/harness.md "Clamping").
// (bugprone-exception-escape: nlohmann::json's moves are noexcept; the check cannot see
// through its assertion macro.)
// NOLINTNEXTLINE(bugprone-exception-escape)
struct Clamp {
  std::string what;         // "argparse --epochs"
  nlohmann::json original;  // null when the job never set it
  nlohmann::json value;     // what the run used instead
  SourceLocation location;  // where the job set it, relative to the code folder
  std::string kind;         // "epochs" | "steps" | "interval" | "ranks" | "" (another value)
};

// What the measured training step says about the real run (docs/formats.md "estimate"):
// the GPU memory it needs, and how long the run would take and when a failure would strike.
// One part of the training step (harness/step_parts.hpp) on a GPU (estimate/projection.hpp):
// all its calls in one step, forward and backward.
struct PartEstimate {
  std::string kind;   // layer | op | optimizer
  std::string name;   // torch.nn.Conv2d
  std::string shape;  // its first input's, "16x64x24x24"; "" for none
  std::string work;   // the efficiency applied: matmul | convolution | recurrent | attention | memory
  long long calls = 0;
  double launches = 0;  // kernel launches per step (estimate/projection.cpp's count)
  double flops = 0;     // per step
  double bytes = 0;     // per step, read and written
  // Per step here: benchmarked alone (forward + backward), else the job's own forward time.
  std::optional<double> here_seconds;
  bool benchmarked = false;
  double low = 0, typical = 0, high = 0;  // seconds per step on the GPU
  std::string bound;                      // compute | memory | launch
};

// The training step on one GPU model, built from its parts (estimate/projection.hpp).
struct StepProjection {
  std::string gpu;
  std::string precision;  // what the step's float work runs as: "FP32", "TF32", "FP16", ...
  double compute_low = 0, compute_typical = 0, compute_high = 0;  // the parts, summed
  double allreduce_seconds = 0;        // the gradients' all-reduce among the job's GPUs, per step
  std::optional<double> data_seconds;  // the DataLoader's pace, measured here
  bool data_overlaps = true;           // its workers prefetch while the GPU computes
  double step_low = 0, step_typical = 0, step_high = 0;  // all of it
  std::string bound;  // what limits it: compute | memory (bandwidth) | launch (kernel launches) | input
  // The GPU memory the step needs on this GPU (its framework's bytes counted), when the job
  // has GPUs; `preflight estimate --gpu` sets it for each GPU named.
  std::optional<std::uint64_t> memory_needed_bytes;
  std::string basis;                // how the figures were found, in a sentence
  std::optional<double> run_hours;  // the unclamped run's training time, typical
  std::optional<double> gpu_hours;  // that × the job's GPUs
  std::optional<double> cost_usd;   // at the table's price per GPU-hour
  std::string price_source;         // the instance the price is from
  std::vector<PartEstimate> parts;  // slowest first
};

struct Estimate {
  double step_seconds_here = 0;  // the measured step on this machine
  double step_seconds = 0;       // the same step on the platform
  std::string step_basis;        // how step_seconds was found
  // False when the job has GPUs and step_seconds is only this machine's time for its step
  // (the profile gives no gpu.tflops): the run's hours are then no projection.
  bool on_platform = true;
  // How often the training loop's DataLoader can deliver a batch, measured here
  // (pipeline/input_bound.hpp).
  std::optional<double> data_seconds;
  int data_workers = 0;  // the loader's; 0: it loads in the training process
  // A training iteration on the platform: step_seconds with the data pipeline's time (the
  // larger of the two when workers prefetch, their sum otherwise). The run's hours use it.
  double iteration_seconds = 0;
  std::optional<int> batch_size;
  std::optional<int> sampled_batch;  // the batch the step ran at here, when the dry run sampled it
  bool shape_only = false;  // the model ran on shape-only tensors: step_seconds_here is no step's time
  std::optional<long long> steps_per_epoch;  // the training DataLoader's length, not capped
  std::optional<double> epochs;              // the real run's, before clamping
  std::optional<long long> total_steps;      // the real run's training steps
  std::optional<double> run_hours;           // the real run's training time on the platform
  // A job with no end of its own (harness::EndlessRun): its training steps an hour on the
  // platform, until the platform's time limit stops it; total_steps and run_hours are unset.
  std::optional<double> steps_per_hour;
  std::optional<double> time_limit_hours;  // the job's time limit (JobSpec::time_limit)
  int gpus = 0;                            // all nodes' GPUs
  std::string gpu_name;
  std::optional<std::uint64_t> gpu_needed_bytes;  // per GPU (during_run.hpp)
  std::uint64_t gpu_available_bytes = 0;
  // Set when the dry run found a failure: where it would strike in the real run.
  std::optional<std::string> failure_stage;
  std::optional<long long> failure_after_steps;
  std::optional<double> failure_after_hours;
  std::optional<double> gpu_hours_saved;
  // The step built from its parts on the platform's GPU; none when the harness recorded no
  // parts or the GPU is not in the GPU table (step_seconds then comes from the FLOPs alone).
  std::optional<StepProjection> projection;
};

// Why Preflight could not run a job (verdict "error"): the error it printed and the exit
// status that went with it.
struct RunError {
  int exit_status = 3;  // 2: bad input (the job file, profile or image); 3: the run failed
  std::string message;  // "job.yaml:3:3: unknown key ..."
};

// (bugprone-exception-escape: as for Clamp, nlohmann::json's moves are noexcept.)
// NOLINTNEXTLINE(bugprone-exception-escape)
struct Report {
  std::string verdict;  // pass | fail | error
  std::string job_name;
  std::string job_file;            // relative to the working folder, as report.json gives it
  std::filesystem::path job_path;  // the same file, absolute
  std::filesystem::path code_dir;  // absolute: the folder finding locations are relative to
  std::string platform;
  std::string image_ref;
  std::string image_digest;
  bool dry_run = true;  // false for `preflight check`: static findings only, no stages
  std::vector<StageResult> stages;
  std::vector<model::Finding> findings;
  // What the rules file says of each category among the findings (the texts SARIF carries).
  std::vector<model::Category> categories;
  std::vector<Clamp> clamps;
  std::vector<std::string> notes;    // what the dry run changed about the job: "input X sampled: ..."
  std::optional<Estimate> estimate;  // when a training step was measured
  double duration_s = 0;
  // The run folder kept in the cache (docs/formats.md "Run folder"); empty when no container ran.
  std::filesystem::path run_dir;
  nlohmann::json trace;           // the dry run's trace (docs/formats.md "trace.json.gz"); null for a check
  std::string trace_gzip;         // the same as trace.json.gz holds it
  std::optional<RunError> error;  // set with verdict "error"
};

// The report of a job Preflight could not run: verdict "error", the job file as given, no
// stages nor findings. The caller fills in the platform and image it was asked for.
Report error_report(const std::string& job_file, const Error& error);

// "fail" when a finding is an error, else "pass".
std::string verdict_of(const std::vector<model::Finding>& findings);
// The exit status the contract gives a verdict: pass 0, fail 1, error 3.
int exit_status_of(const std::string& verdict);
// A report's: its verdict's, or for an error the error's (2 for bad input).
int exit_status_of(const Report& report);

// Where CI tools show a finding: its file made absolute against the code folder, or the job
// file when the finding has no place in the code (code scanning refuses a result without one).
SourceLocation place_of(const Report& report, const model::Finding& finding);

// report.json's schema, which report_reader.hpp requires back.
inline constexpr const char* kReportSchema = "preflight.report/v1";

nlohmann::json to_json(const Report& report);
// A step's projection on a GPU as report.json gives it (docs/formats.md), with its
// `max_parts` slowest parts.
nlohmann::json projection_json(const StepProjection& projection, std::size_t max_parts);
Status write_json(const Report& report, const std::filesystem::path& file);
// Writes a report's text to `file`; a file that cannot be opened is bad input (exit 2).
Status write_report_file(const std::filesystem::path& file, const std::string& text);

// The terminal summary; `color` adds ANSI colours (only on a terminal without NO_COLOR).
void print_summary(const Report& report, std::ostream& out, bool color);
// Whether colour should be used on a stream with this file descriptor.
bool use_color(int fd);

}  // namespace preflight::report
