// The whole pipeline of `preflight run`: job + profile → plan → image → container with the
// harness → diagnosis → report. The command-line front end only parses options and prints.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "report/report.hpp"
#include "util/error.hpp"

namespace preflight::pipeline {

struct DryRunOptions {
  std::filesystem::path job_file = "job.yaml";
  std::optional<std::string> platform;               // --platform NAME|FILE
  std::optional<std::string> image;                  // --image REF
  std::optional<int> steps;                          // --steps N
  std::optional<std::chrono::milliseconds> timeout;  // --timeout DURATION
  bool harness = true;                               // --no-harness: no stages, clamps or measurements
  bool stop_on_static = true;  // a certain static error ends the run before the container starts
  bool strict = false;         // --strict: predictions the dry run did not refute stay errors
};

// Where the pipeline tells the user what is going on; each may be a no-op.
struct Console {
  std::function<void(const std::string&)> progress;                       // "resolving image pytorch", ...
  std::function<void(bool is_stderr, std::string_view line)> job_output;  // the job's own lines
  std::function<void(const std::string&)> step;  // while the job runs: "stage train", replaced by the next
};

// Runs the job as its platform would. Bad input (spec, profile, image reference) and
// Preflight's own failures come back as errors; a job that fails is a report with verdict fail.
Result<report::Report> dry_run(const DryRunOptions& options, const Console& console);

}  // namespace preflight::pipeline
