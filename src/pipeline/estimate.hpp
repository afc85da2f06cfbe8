// What the training step the harness measured says about the real run (docs/harness.md
// "Measuring a step"): its time on the platform's GPU, the length of the unclamped run, and
// when the failure the dry run found would strike there, in GPU-hours.
#pragma once

#include <optional>
#include <vector>

#include "estimate/gpu_table.hpp"
#include "harness/events.hpp"
#include "model/run_evidence.hpp"
#include "pipeline/input_bound.hpp"
#include "report/report.hpp"
#include "spec/job_spec.hpp"

namespace preflight::pipeline {

// A step on a GPU the GPU table does not have, or without its parts: its FLOPs at this
// fraction of the card's peak, and at least this long per top-level operator (a kernel
// launch). Modelled constants; docs/estimate.md gives the reasons.
inline constexpr double kGpuUtilisation = 0.4;
inline constexpr double kSecondsPerOperator = 10e-6;

// None when no training step was measured (a job that never trained, or trained one step).
// On a GPU in `gpus` the step is built from its parts (estimate/projection.hpp); `data`, the
// training DataLoader's pace, is added to each iteration on the platform.
std::optional<report::Estimate> estimate_run(const harness::HarnessEvents& events,
                                             const std::vector<report::Clamp>& clamps,
                                             const std::vector<model::Finding>& findings,
                                             const model::PlatformFacts& facts,
                                             std::optional<DataPace> data = std::nullopt,
                                             const estimate::GpuTable* gpus = nullptr);

// A warning (rule time-limit, stage train, at the job's time limit) when the run projected
// from the measured step is longer than the job's time limit. A limit that cannot be
// compared (no step count, no step time on the platform's GPU) is a note in `notes`.
std::optional<model::Finding> time_limit_finding(const report::Estimate& estimate, const spec::JobSpec& job,
                                                 std::vector<std::string>& notes);

// The step's parts that the harness recorded in the measured step's process; none if it
// recorded none.
const harness::StepParts* measured_parts(const harness::HarnessEvents& events, int pid);

}  // namespace preflight::pipeline
