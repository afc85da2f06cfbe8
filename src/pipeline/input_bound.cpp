#include "pipeline/input_bound.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/json_fields.hpp"

namespace preflight::pipeline {

namespace {

// The stretches of wall-clock time (µs) the main process spent in stage train.
std::vector<std::pair<std::int64_t, std::int64_t>> training_stretches(const harness::HarnessEvents& events) {
  const int pid = events.main_pid;
  const harness::ProcessRun* process = nullptr;
  for (const auto& run : events.processes)
    if (run.pid == pid && run.started > 0) process = &run;
  std::vector<std::pair<std::int64_t, std::int64_t>> stretches;
  if (process == nullptr) return stretches;
  const auto at = [&](double t) { return std::llround((process->started + t) * 1e6); };
  constexpr std::int64_t kNotTraining = -1;
  std::int64_t since = kNotTraining;
  for (const auto& event : events.stages) {
    if (event.pid != pid) continue;
    if (since != kNotTraining) stretches.emplace_back(since, at(event.t));
    since = event.stage == "train" ? at(event.t) : kNotTraining;
  }
  if (since != kNotTraining) stretches.emplace_back(since, std::numeric_limits<std::int64_t>::max());
  return stretches;
}

bool during(const std::vector<std::pair<std::int64_t, std::int64_t>>& stretches, std::int64_t ts) {
  return std::any_of(stretches.begin(), stretches.end(),
                     [&](const auto& stretch) { return stretch.first <= ts && ts < stretch.second; });
}

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

std::string milliseconds(double seconds) { return fmt::format("{:.1f} ms", seconds * 1000); }

}  // namespace

std::optional<DataPace> data_pace(const harness::HarnessEvents& events, const harness::HarnessTrace& trace) {
  const auto stretches = training_stretches(events);
  std::vector<double> fetches, waits;
  int workers = 0;
  for (const auto& record : trace.records) {
    if (record.phase != 'X' || record.category != "data" || !during(stretches, record.ts)) continue;
    const bool ended = record.args.contains("end") || record.args.contains("error");
    if (record.name == "fetch batch" && !ended) fetches.push_back(static_cast<double>(record.dur) / 1e6);
    if (record.name != "next batch" || record.pid != events.main_pid) continue;
    workers = std::max(workers, json_fields::integer(record.args, "workers"));
    // A loop's first batch waits for its workers to start; an end or a failure is no batch.
    if (json_fields::integer(record.args, "index") > 1 && !ended)
      waits.push_back(static_cast<double>(record.dur) / 1e6);
  }
  // The pipeline's pace: a worker's fetch of a batch, shared by the workers. Without fetches
  // (an old torch), what the training loop waited. A sampled batch's, times the job's own
  // batch over it: loading grows with the items.
  double scale = 1;
  if (const auto* step = harness::main_or_first(events.steps, events.main_pid);
      step && step->sampled_batch && step->batch_size && *step->sampled_batch > 0)
    scale = static_cast<double>(*step->batch_size) / *step->sampled_batch;
  if (auto fetch = median(std::move(fetches)))
    return DataPace{*fetch / std::max(workers, 1) * scale, workers};
  if (auto wait = median(std::move(waits))) return DataPace{*wait * scale, workers};
  return std::nullopt;
}

std::optional<model::Finding> input_bound_finding(const report::Estimate& estimate,
                                                  const model::PlatformFacts& facts,
                                                  const harness::HarnessEvents& events) {
  if (!estimate.data_seconds || facts.gpus <= 0 || facts.gpu_tflops <= 0) return std::nullopt;
  const double data = *estimate.data_seconds;
  const double compute = estimate.step_seconds;
  if (data < kMinDataSeconds || data <= compute) return std::nullopt;
  model::Finding finding;
  finding.rule = "input-bound";
  finding.severity = model::Severity::Warning;
  finding.phase = model::Phase::Dryrun;
  finding.stage = "train";
  finding.message = fmt::format(
      "on the platform's {} a training step would compute for {}, but the DataLoader delivers a batch "
      "every {}: the GPU would be idle {:.0f}% of the time",
      facts.gpu_name, milliseconds(compute), milliseconds(data), 100 * (1 - compute / data));
  finding.hint =
      "give the training DataLoader more workers (num_workers, a few per GPU, and pin_memory=True), or "
      "prepare and decode the data before training; the pace was measured on this machine's CPU, so "
      "compare the platform's";
  for (const auto& cap : events.caps) {
    if (cap.what != "DataLoader") continue;
    finding.location = harness::location_in_code(cap.where, facts.code_container_dir);
    if (finding.location.known()) break;
  }
  return finding;
}

}  // namespace preflight::pipeline
