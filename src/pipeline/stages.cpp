#include "pipeline/stages.hpp"

#include <algorithm>
#include <iterator>
#include <map>

namespace preflight::pipeline {

std::vector<report::StageResult> stage_results(const harness::HarnessEvents& events,
                                               const std::optional<std::string>& failed_stage, bool had_setup,
                                               double setup_seconds, double total_seconds) {
  // Time spent in each stage, from the transitions of the processes that make the job's
  // timeline, one after the other.
  std::map<std::string, double> seconds;
  std::map<std::string, bool> entered;
  if (had_setup) {
    entered["setup"] = true;
    seconds["setup"] = setup_seconds;
  }
  struct Stretch {
    int pid;
    double offset;                // its start after the first's
    std::optional<double> ended;  // its own time at exit
  };
  std::vector<Stretch> stretches;
  const auto timeline = harness::timeline_processes(events);
  stretches.reserve(timeline.size());
  for (const harness::ProcessRun* process : timeline) {
    stretches.push_back({process->pid, process->started - timeline.front()->started, process->exited});
  }
  if (stretches.empty() && events.command_started) stretches.push_back({events.main_pid, 0, std::nullopt});
  for (const Stretch& stretch : stretches) {
    // The harness starts every command process in init without a stage event for it.
    std::string current = "init";
    double since = 0;
    entered[current] = true;
    for (const auto& stage : events.stages) {
      if (stage.pid != stretch.pid) continue;
      entered[stage.stage] = true;
      seconds[current] += stage.t - since;
      current = stage.stage, since = stage.t;
    }
    // The last process lasts until the container ended (its start-up counted in).
    double end = stretch.ended.value_or(since);
    if (&stretch == &stretches.back()) end = std::max(end, total_seconds - setup_seconds - stretch.offset);
    seconds[current] += std::max(0.0, end - since);
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
