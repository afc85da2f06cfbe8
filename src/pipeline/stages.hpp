// Stage statuses for the report from what the harness saw and where the job failed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/events.hpp"
#include "report/report.hpp"

namespace preflight::pipeline {

// `failed_stage`: the stage of the first error finding, if any. `had_setup`: the job has a
// setup step; `setup_seconds`: how long it took. Stages the job never entered are
// "not_reached" after a failure and "absent" otherwise (and before the failed stage).
std::vector<report::StageResult> stage_results(const harness::HarnessEvents& events,
                                               const std::optional<std::string>& failed_stage, bool had_setup,
                                               double setup_seconds, double total_seconds);

}  // namespace preflight::pipeline
