#include "pipeline/input_bound.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "util/json_fields.hpp"

namespace preflight::pipeline {

namespace {

// The stage the process was in at its own time `t`.
std::string stage_at(const harness::HarnessEvents& events, int pid, double t) {
  std::string stage = "init";
  for (const auto& event : events.stages) {
    if (event.pid != pid) continue;
    if (event.t > t) break;
    stage = event.stage;
  }
  return stage;
}

std::string milliseconds(double seconds) { return fmt::format("{:.0f} ms", seconds * 1000); }

}  // namespace

std::optional<double> data_wait_per_step(const harness::HarnessEvents& events,
                                         const harness::HarnessTrace& trace) {
  const int pid = events.main_pid;
  double started = 0;
  for (const auto& process : events.processes)
    if (process.pid == pid) started = process.started;
  if (started <= 0) return std::nullopt;
  std::vector<double> waits;
  for (const auto& record : trace.records) {
    if (record.pid != pid || record.phase != 'X' || record.category != "data" || record.name != "next batch")
      continue;
    // A loop's first batch waits for its workers to start; an end or a failure is no batch.
    if (json_fields::integer(record.args, "index") <= 1 || record.args.contains("end") ||
        record.args.contains("error"))
      continue;
    const double t = static_cast<double>(record.ts) / 1e6 - started;
    if (stage_at(events, pid, t) == "train") waits.push_back(static_cast<double>(record.dur) / 1e6);
  }
  if (waits.empty()) return std::nullopt;
  std::sort(waits.begin(), waits.end());
  const std::size_t middle = waits.size() / 2;
  return waits.size() % 2 == 1 ? waits[middle] : (waits[middle - 1] + waits[middle]) / 2;
}

std::optional<model::Finding> input_bound_finding(const report::Estimate& estimate,
                                                  const model::PlatformFacts& facts,
                                                  const harness::HarnessEvents& events) {
  if (!estimate.data_wait_seconds || facts.gpus <= 0 || facts.gpu_tflops <= 0) return std::nullopt;
  const double wait = *estimate.data_wait_seconds;
  const double compute = estimate.step_seconds;
  if (wait < kMinDataWaitSeconds || wait <= compute) return std::nullopt;
  model::Finding finding;
  finding.rule = "input-bound";
  finding.severity = model::Severity::Warning;
  finding.phase = model::Phase::Dryrun;
  finding.stage = "train";
  finding.message = fmt::format(
      "on the platform's {} each training step would wait {} for its batch and compute for {}: the GPU would "
      "be idle {:.0f}% of the time (here a step waited {} of {})",
      facts.gpu_name, milliseconds(wait), milliseconds(compute), 100 * wait / (wait + compute),
      milliseconds(wait), milliseconds(estimate.step_seconds_here));
  finding.hint =
      "give the training DataLoader workers (num_workers, a few per GPU, and pin_memory=True), or prepare "
      "and decode the data before training; the wait was measured on this machine's CPU, so compare the "
      "platform's";
  for (const auto& cap : events.caps) {
    if (cap.what != "DataLoader") continue;
    finding.location = harness::location_in_code(cap.where, facts.code_container_dir);
    if (finding.location.known()) break;
  }
  return finding;
}

}  // namespace preflight::pipeline
