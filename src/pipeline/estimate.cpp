#include "pipeline/estimate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "diagnosis/during_run.hpp"
#include "estimate/projection.hpp"
#include "model/category.hpp"
#include "util/text.hpp"

namespace preflight::pipeline {

namespace {

using harness::HarnessEvents;

constexpr const char* kBeforeTraining[] = {"setup", "init", "data", "model"};

// An epoch or step count the harness clamped: what the job asked for and what it ran.
struct CountClamp {
  double original = 0;
  double value = 0;
};

// The job's epoch or step count of `kind`: a clamp's or a cut loop's, else a count the harness
// kept as the job set it (`ran`: how many of those the dry run ran).
std::optional<CountClamp> count_of_kind(const std::vector<report::Clamp>& clamps, const HarnessEvents& events,
                                        const std::string& kind, double ran) {
  for (const report::Clamp& clamp : clamps) {
    if (clamp.kind == kind && clamp.original.is_number() && clamp.value.is_number())
      return CountClamp{clamp.original.get<double>(), clamp.value.get<double>()};
  }
  for (const harness::CountEvent& count : events.counts) {
    if (count.kind == kind) return CountClamp{count.value, ran};
  }
  return std::nullopt;
}

void set_step_time(report::Estimate& out, const HarnessEvents& events, const harness::StepMeasure& step,
                   const model::PlatformFacts& facts, const estimate::GpuTable* gpus) {
  out.step_seconds_here = step.seconds;
  // A sampled step's time, at the job's own batch: the work grows with the batch.
  const double scale = step.sampled_batch && step.batch_size && *step.sampled_batch > 0
                           ? static_cast<double>(*step.batch_size) / *step.sampled_batch
                           : 1.0;
  out.step_seconds = out.iteration_seconds = step.seconds * scale;
  const std::string here =
      step.shape_only ? "the time here of a step on shape-only tensors, not of the job's step"
      : scale == 1.0  ? "measured here"
                      : fmt::format("measured here at batch size {}, times {:g} for the job's own {}",
                                    *step.sampled_batch, scale, *step.batch_size);
  if (facts.gpus <= 0) {
    out.step_basis = here + " (the job runs without a GPU)";
    return;  // the step measured here waited for its batch too
  }
  const estimate::GpuSpec* gpu = gpus ? gpus->find(facts.gpu_name) : nullptr;
  const harness::StepParts* parts = measured_parts(events, step.pid);
  if (gpu && parts) {
    estimate::StepInputs inputs;
    inputs.parts = parts;
    inputs.replicas = step.replicas;
    inputs.data_seconds = out.data_seconds;
    inputs.data_workers = out.data_workers;
    inputs.gpus = out.gpus;
    inputs.nodes = std::max(1, facts.nodes);
    inputs.total_steps = out.total_steps;
    out.projection = estimate::project_step(inputs, *gpu, *gpus);
    out.step_seconds = out.projection->compute_typical + out.projection->allreduce_seconds;
    out.iteration_seconds = out.projection->step_typical;
    out.step_basis = out.projection->basis;
    return;
  }
  if (facts.gpu_tflops > 0 && step.flops > 0) {
    const double compute = step.flops / step.replicas / (facts.gpu_tflops * 1e12 * kGpuUtilisation);
    out.step_seconds = std::max(compute, step.ops * kSecondsPerOperator);
    out.step_basis = fmt::format(
        "{:.3g} GFLOP at {:.0f}% of the {}'s {} TFLOPS, at least {:.0f} us per operator", step.flops / 1e9,
        kGpuUtilisation * 100, facts.gpu_name, facts.gpu_tflops, kSecondsPerOperator * 1e6);
  } else {
    out.step_basis = here + " (the profile gives no gpu.tflops)";
    out.on_platform = false;
  }
  out.iteration_seconds =
      estimate::with_data_pipeline(out.step_seconds, out.data_seconds, out.data_workers > 0);
}

// The first error finding: the failure the real run would meet first.
const model::Finding* first_failure(const std::vector<model::Finding>& findings) {
  for (const auto& finding : findings)
    if (finding.severity == model::Severity::Error && !finding.stage.empty()) return &finding;
  return nullptr;
}

// The job's own interval of the periodic work a failure in `stage` struck in, when the harness
// brought it forward ("config.save_every" 500 → 2 for a checkpoint, "argparse --eval-interval"
// for validation): on the platform that work first runs after that many steps.
std::optional<double> interval_brought_forward(const std::vector<report::Clamp>& clamps,
                                               const std::string& stage) {
  static const std::vector<std::string> kCheckpoint = {"save", "ckpt", "checkpoint"};
  static const std::vector<std::string> kValidate = {"eval", "val"};
  const std::vector<std::string>* words = stage == "checkpoint" ? &kCheckpoint
                                          : stage == "validate" ? &kValidate
                                                                : nullptr;
  if (!words) return std::nullopt;
  for (const report::Clamp& clamp : clamps) {
    if (clamp.kind != "interval" || !clamp.original.is_number()) continue;
    // The field's own name: the last word of "config.save_every", "cfg['save_every']", "--save-every".
    const auto end = clamp.what.find_last_not_of("'\"]");
    const auto start = clamp.what.find_last_of(".[' ", end);
    std::string name = clamp.what.substr(start == std::string::npos ? 0 : start + 1,
                                         end == std::string::npos ? 0 : end - start);
    name.erase(0, name.find_first_not_of('-'));
    for (const std::string& word : *words)
      if (name.rfind(word, 0) == 0) return clamp.original.get<double>();
  }
  return std::nullopt;
}

// Training steps of the real run before `failure` strikes; none when that cannot be told.
// `interval`: the job's own interval of the periodic work it struck in, brought forward.
std::optional<long long> steps_before(const model::Finding& failure, const HarnessEvents& events,
                                      const harness::StepMeasure& step,
                                      const std::optional<CountClamp>& epochs,
                                      const std::optional<CountClamp>& steps,
                                      std::optional<double> interval) {
  for (const char* stage : kBeforeTraining)
    if (failure.stage == stage) return 0;
  const std::string category = model::category_id(failure.category);
  if (category == "gpu-out-of-memory") return 1;
  // When it struck in the measured process: the Loss NaN event, the ending exception, or
  // (killed without an exception) the end of the run.
  double at = std::numeric_limits<double>::infinity();
  long long dry_step = 0;
  if (category == "loss-nan") {
    for (const auto& nan : events.nonfinite)
      if (nan.pid == step.pid) at = nan.t, dry_step = nan.step;
  } else {
    for (const auto& exception : events.exceptions)
      if (exception.pid == step.pid && exception.stage == failure.stage) at = exception.t;
  }
  long long epochs_done = 0, dry_steps_done = 0;
  for (const auto& end : events.epochs) {
    if (end.pid != step.pid || end.t > at) continue;
    ++epochs_done;
    dry_steps_done += end.batches;
  }
  const std::optional<int> per_epoch = step.batches_per_epoch;
  // Periodic work within the first epoch, brought forward: the platform reaches it at the
  // job's own interval.
  if (interval && epochs_done == 0) return std::llround(*interval);
  if (failure.stage == "train") {
    const long long into_epoch = std::max<long long>(1, dry_step - dry_steps_done);
    if (epochs_done == 0) return into_epoch;
    if (!per_epoch) return std::nullopt;
    return epochs_done * *per_epoch + into_epoch;
  }
  // After training: at the end of the epoch it struck in, or of the whole run when the dry
  // run had done all of its (clamped) epochs.
  const bool after_last = failure.stage == "evaluate" || failure.stage == "predict";
  if (steps && after_last) return static_cast<long long>(steps->original);
  if (!per_epoch) return std::nullopt;
  double real_epochs = static_cast<double>(epochs_done);
  if (epochs && epochs_done >= epochs->value) real_epochs = epochs->original;
  return std::llround(real_epochs * *per_epoch);
}

}  // namespace

std::optional<model::Finding> time_limit_finding(const report::Estimate& estimate, const spec::JobSpec& job,
                                                 std::vector<std::string>& notes) {
  if (!job.time_limit) return std::nullopt;
  const double limit = static_cast<double>(job.time_limit->count());
  const std::string limit_text = human_duration(limit);
  // Named as the code's files are: relative to the code folder when the job file is in it.
  SourceLocation where = job.time_limit_where;
  if (is_under(where.file.string(), job.code_dir.string()))
    where.file = where.file.lexically_relative(job.code_dir);
  const std::string at = where.str();
  if (estimate.steps_per_hour) {
    // A job with no end of its own: the limit is where it ends, not a failure.
    notes.push_back(
        fmt::format("{}: the platform stops the job at its time limit ({}), after about {:.0f} "
                    "training steps",
                    at, limit_text, *estimate.steps_per_hour * limit / 3600));
    return std::nullopt;
  }
  if (!estimate.run_hours || !estimate.total_steps || !estimate.on_platform) {
    notes.push_back(fmt::format(
        "{}: the time limit ({}) was not compared with the run: {}", at, limit_text,
        !estimate.on_platform
            ? "the profile gives no gpu.tflops, so the step's time on the platform is unknown"
            : "the run's number of steps could not be told (no epoch or step count was clamped)"));
    return std::nullopt;
  }
  const double run = *estimate.run_hours * 3600;
  if (run <= limit) return std::nullopt;
  model::Finding finding;
  finding.rule = "time-limit";
  finding.severity = model::Severity::Warning;
  finding.phase = model::Phase::Dryrun;
  finding.stage = "train";
  finding.location = where;
  const long long steps = *estimate.total_steps;
  const auto reached = static_cast<long long>(std::floor(limit / run * static_cast<double>(steps)));
  std::string stopped = fmt::format("after about {} of its {} training steps", reached, steps);
  // The epoch it is in, when the run's length is counted in epochs (not a step count).
  if (estimate.epochs && estimate.steps_per_epoch && *estimate.steps_per_epoch > 0 &&
      std::llround(*estimate.epochs * static_cast<double>(*estimate.steps_per_epoch)) == steps)
    stopped +=
        fmt::format(", in epoch {} of {:g}", reached / *estimate.steps_per_epoch + 1, *estimate.epochs);
  std::string bounds;
  if (estimate.projection)
    bounds = fmt::format("; {} to {} at the projection's bounds",
                         human_duration(estimate.projection->step_low * static_cast<double>(steps)),
                         human_duration(estimate.projection->step_high * static_cast<double>(steps)));
  finding.message = fmt::format(
      "the whole run would take about {} on the platform ({} steps of {} each, projected from the step the "
      "dry run measured{}), but the job's time limit is {}: the platform would stop it {}",
      human_duration(run), steps, human_duration(estimate.iteration_seconds), bounds, limit_text, stopped);
  finding.hint = fmt::format(
      "ask for at least {} with a margin, train fewer steps, or save a checkpoint every epoch and resume "
      "from "
      "the last one in a second job",
      human_duration(run));
  return finding;
}

const harness::StepParts* measured_parts(const HarnessEvents& events, int pid) {
  for (const auto& parts : events.step_parts)
    if (parts.pid == pid && !parts.parts.empty()) return &parts;
  return nullptr;
}

std::optional<report::Estimate> estimate_run(const HarnessEvents& events,
                                             const std::vector<report::Clamp>& clamps,
                                             const std::vector<model::Finding>& findings,
                                             const model::PlatformFacts& facts, std::optional<DataPace> data,
                                             const estimate::GpuTable* gpus) {
  const harness::StepMeasure* step = harness::main_or_first(events.steps, events.main_pid);
  if (!step) return std::nullopt;
  report::Estimate out;
  if (data) {
    out.data_seconds = data->seconds;
    out.data_workers = data->workers;
  }
  out.batch_size = step->batch_size;
  out.sampled_batch = step->sampled_batch;
  out.shape_only = step->shape_only;
  out.gpus = std::max(0, facts.gpus) * std::max(1, facts.nodes);
  out.gpu_name = facts.gpu_name;
  if (auto need = diagnosis::gpu_memory_need(events, facts)) {
    out.gpu_needed_bytes = need->needed_bytes;
    out.gpu_available_bytes = need->available_bytes;
  }
  long long dry_epochs = 0;
  for (const auto& end : events.epochs) dry_epochs += end.pid == step->pid;
  const auto epochs = count_of_kind(clamps, events, "epochs", static_cast<double>(dry_epochs));
  const auto steps = count_of_kind(clamps, events, "steps", 0);
  if (step->batches_per_epoch) out.steps_per_epoch = *step->batches_per_epoch;
  const bool endless = std::any_of(events.endless.begin(), events.endless.end(),
                                   [&](const harness::EndlessRun& run) { return run.pid == step->pid; });
  if (endless && !epochs && !steps) {
    // No length to project: the DataLoaders it went through again and again are no epochs.
    set_step_time(out, events, *step, facts, gpus);
    if (out.iteration_seconds > 0) out.steps_per_hour = 3600 / out.iteration_seconds;
    return out;
  }
  if (epochs) {
    out.epochs = epochs->original;
  } else if (dry_epochs > 0 && !steps) {
    // A run counted in steps (--max-iters 600000) is not as many epochs as the dry run went
    // through its DataLoader.
    out.epochs = static_cast<double>(dry_epochs);
  }
  if (steps) {
    out.total_steps = static_cast<long long>(steps->original);
  } else if (out.epochs && out.steps_per_epoch) {
    out.total_steps = std::llround(*out.epochs * *out.steps_per_epoch);
  }
  set_step_time(out, events, *step, facts, gpus);
  if (out.total_steps) out.run_hours = *out.total_steps * out.iteration_seconds / 3600;
  if (const model::Finding* failure = first_failure(findings)) {
    out.failure_stage = failure->stage;
    out.failure_after_steps = steps_before(*failure, events, *step, epochs, steps,
                                           interval_brought_forward(clamps, failure->stage));
    if (out.failure_after_steps) {
      out.failure_after_hours = *out.failure_after_steps * out.iteration_seconds / 3600;
      out.gpu_hours_saved = *out.failure_after_hours * out.gpus;
    }
  }
  return out;
}

}  // namespace preflight::pipeline
