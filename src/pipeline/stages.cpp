#include "pipeline/stages.hpp"

#include <algorithm>
#include <iterator>
#include <map>

namespace preflight::pipeline {

std::vector<report::StageResult> stage_results(const harness::HarnessEvents& events,
                                               const std::optional<std::string>& failed_stage, bool had_setup,
                                               double setup_seconds, double total_seconds) {
  // Time spent in each stage, from the main process's transitions (the first process seen).
  std::map<std::string, double> seconds;
  std::map<std::string, bool> entered;
  if (had_setup) {
    entered["setup"] = true;
    seconds["setup"] = setup_seconds;
  }
  // The harness starts every command process in init without a stage event for it.
  const harness::StageEvent init{"init", 0, events.main_pid, "", {}};
  const harness::StageEvent* previous = events.command_started ? &init : nullptr;
  if (previous) entered["init"] = true;
  for (const auto& stage : events.stages) {
    if (stage.pid != events.main_pid) continue;
    entered[stage.stage] = true;
    if (previous) seconds[previous->stage] += stage.t - previous->t;
    previous = &stage;
  }
  if (previous) {
    // The last stage lasts until the container ended (its start-up counted in).
    seconds[previous->stage] += std::max(0.0, total_seconds - setup_seconds - previous->t);
  }
  if (failed_stage) entered[*failed_stage] = true;

  const auto begin = std::begin(harness::kStageNames), end = std::end(harness::kStageNames);
  const auto failed_at = failed_stage ? std::find(begin, end, *failed_stage) : end;
  std::vector<report::StageResult> results;
  for (auto name = begin; name != end; ++name) {
    report::StageResult result{*name, "absent", seconds[*name]};
    if (failed_stage && *name == *failed_stage)
      result.status = "failed";
    else if (entered[*name])
      result.status = "passed";
    else if (failed_at != end && name > failed_at)
      result.status = "not_reached";
    results.push_back(result);
  }
  return results;
}

}  // namespace preflight::pipeline
