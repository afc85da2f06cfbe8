// Whether the job's training steps would wait for their data on the platform (docs/diagnosis.md
// "Input-bound steps"): the wait for each batch, from the trace, set against the step's time on
// the platform's GPU.
#pragma once

#include <optional>

#include "harness/events.hpp"
#include "harness/trace.hpp"
#include "model/finding.hpp"
#include "model/run_evidence.hpp"
#include "report/report.hpp"

namespace preflight::pipeline {

// Below this, a wait is noise: a step that waits less is never called input-bound.
inline constexpr double kMinDataWaitSeconds = 0.005;

// How long a training step of the main process waits for its batch here: the median wait of
// its DataLoader batches in stage train, each loop's first batch (its workers starting) left
// out. None when the dry run had no such batch.
std::optional<double> data_wait_per_step(const harness::HarnessEvents& events,
                                         const harness::HarnessTrace& trace);

// A warning (rule input-bound) when, on the platform's GPU, a step would wait for its data
// longer than it computes; none otherwise, or when the step was measured here (no GPU).
std::optional<model::Finding> input_bound_finding(const report::Estimate& estimate,
                                                  const model::PlatformFacts& facts,
                                                  const harness::HarnessEvents& events);

}  // namespace preflight::pipeline
