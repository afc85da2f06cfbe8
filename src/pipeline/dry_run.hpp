// The whole pipeline of `preflight run`: job + profile → plan → image → container with the
// harness → diagnosis → report. The command-line front end only parses options and prints;
// the container runtime is passed in (runc, or a test's fake).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "pipeline/job_context.hpp"
#include "report/report.hpp"
#include "sandbox/in_pod.hpp"
#include "sandbox/runtime.hpp"
#include "util/error.hpp"

namespace preflight::pipeline {

struct DryRunOptions {
  std::filesystem::path job_file = "job.yaml";
  std::optional<std::string> platform;  // --platform NAME|FILE
  std::optional<std::string> image;     // --image REF
  formats::ReadOptions read;            // --as, --code, --map
  std::optional<int> steps;             // --steps N
  std::optional<int> batch;             // 0: the job's own batch size (the re-run of a failure sampling made)
  std::optional<std::chrono::milliseconds> timeout;  // --timeout DURATION
  bool harness = true;                               // --no-harness: no stages, clamps or measurements
  bool stop_on_static = true;      // a certain static error ends the run before the container starts
  bool strict = false;             // --strict: predictions the dry run did not refute stay errors
  std::filesystem::path runs_dir;  // where run folders go; empty: the cache's runs/
  // Only the user lowers the sandbox's floor (docs/security.md "The sandbox floor").
  bool network = false;                        // --network
  std::optional<spec::SeccompPolicy> seccomp;  // --seccomp NAME; none: the floor, "default"
  // Replaces the image's configuration: a run in a pod (--in-pod) knows its image by the
  // environment the pod was given.
  std::optional<image::ImageConfig> image_config;
};

// Where the pipeline tells the user what is going on; each may be a no-op.
struct Console {
  std::function<void(const std::string&)> progress;                       // "resolving image pytorch", ...
  std::function<void(bool is_stderr, std::string_view line)> job_output;  // the job's own lines
  std::function<void(const std::string&)> step;  // while the job runs: "stage train", replaced by the next
};

// Runs the job as its platform would, in containers of `runtime`. Bad input (spec, profile,
// image reference) and Preflight's own failures come back as errors; a job that fails is a
// report with verdict fail.
Result<report::Report> dry_run(const DryRunOptions& options, const Console& console,
                               sandbox::ContainerRuntime& runtime);

// The same for a job already loaded (its job file, platform and image options are not read
// again): static checks, then the run unless they found a certain error, then the report.
// `started`: when the command began, for the report's duration.
Result<report::Report> dry_run_loaded(
    const JobContext& context, const DryRunOptions& options, const Console& console,
    sandbox::ContainerRuntime& runtime,
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now());

// The init container's part of a run in a Kubernetes pod (`preflight run --in-pod --stage`):
// the job is loaded and planned as `dry_run` would, and the places its platform gives it
// read-only are filled (sandbox::InPod::stage); nothing runs.
Status stage_in_pod(const DryRunOptions& options, const Console& console, const sandbox::InPod& pod);

}  // namespace preflight::pipeline
