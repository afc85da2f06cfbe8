// `preflight estimate`: the dry run, then its measured step part by part — each distinct
// part benchmarked alone in the image (estimate/part_bench.hpp), the step built again from
// them on this machine, and projected on GPU models (estimate/projection.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "estimate/part_bench.hpp"
#include "estimate/projection.hpp"
#include "pipeline/dry_run.hpp"

namespace preflight::pipeline {

struct EstimateOptions {
  DryRunOptions run;
  std::vector<std::string> gpus;  // --gpu: names in the GPU table; empty: the profile's GPU
  double budget = 0.2;            // seconds of repeats per part benchmarked
  bool bench = true;              // false (--no-bench): project without benchmarking the parts
};

// (bugprone-exception-escape: as for report::Report, which it holds: nlohmann::json's moves are
// noexcept.)
// NOLINTNEXTLINE(bugprone-exception-escape)
struct JobEstimate {
  report::Report report;  // the dry run's
  // The measured step's parts; none when no step was measured (the job did not train for
  // two steps) or the harness could not record them.
  std::optional<harness::StepParts> parts;
  estimate::BenchRun bench;
  std::optional<estimate::Construction> here;       // none with --no-bench
  std::vector<report::StepProjection> projections;  // one per GPU asked for
};

// Bad input (an unknown --gpu among them, before anything runs) and Preflight's own failures
// are errors; a job that fails its dry run still gets the estimate of the steps it measured.
Result<JobEstimate> estimate_job(const EstimateOptions& options, const Console& console,
                                 sandbox::ContainerRuntime& runtime);

}  // namespace preflight::pipeline
