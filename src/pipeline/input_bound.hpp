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

// Below this, a batch's time is noise: a step that waits less is never called input-bound.
inline constexpr double kMinDataSeconds = 0.005;

// How often the training loop's DataLoader can deliver a batch (docs/diagnosis.md
// "Input-bound steps"): the median time a worker took to fetch a batch while the main process
// trained, divided by the loader's workers (a loader without workers fetches in the main
// process); without such fetches, the median wait of the training loop's batches after each
// loop's first. None when the dry run had no training batch.
struct DataPace {
  double seconds = 0;
  int workers = 0;  // the loader's; 0: it loads in the training process
};
std::optional<DataPace> data_pace(const harness::HarnessEvents& events, const harness::HarnessTrace& trace);

// A warning (rule input-bound) when, on the platform's GPU, a step would compute in less time
// than the DataLoader takes to deliver a batch; none otherwise, or when the step was measured
// here (no GPU).
std::optional<model::Finding> input_bound_finding(const report::Estimate& estimate,
                                                  const model::PlatformFacts& facts,
                                                  const harness::HarnessEvents& events);

}  // namespace preflight::pipeline
