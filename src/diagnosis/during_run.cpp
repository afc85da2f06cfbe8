#include "diagnosis/during_run.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "diagnosis/traceback.hpp"
#include "util/text.hpp"

namespace preflight::diagnosis {

namespace {

// A dry-run finding of the rule `rule_id` of the rules file, classified as it says; the rule's
// hint, else its category's usual fix. load_policies has made sure the rules hold each id of
// kEmittedFailureRules; an id outside that list is a bug of Preflight's.
model::Finding from_rule(const FailureRules& rules, const char* rule_id) {
  const FailureRule* rule = rules.find_rule(rule_id);
  if (!rule)
    throw std::logic_error("the code emitted rule \"" + std::string(rule_id) + "\", which " +
                           rules.file().string() + " does not define");
  model::Finding finding;
  finding.rule = rule_id;
  finding.category = rule->category;
  finding.root_cause = rule->root_cause;
  finding.severity = rule->severity;
  finding.retry = rule->retry;
  finding.phase = model::Phase::Dryrun;
  finding.stage = "train";
  if (const model::Category* category = rules.find_category(rule->category)) {
    finding.dimension = category->dimension;
    finding.hint = category->fix;
  }
  if (!rule->hint.empty()) finding.hint = rule->hint;
  return finding;
}

std::uint64_t need_of(const harness::StepMeasure& step, std::uint64_t step_bytes, std::uint64_t framework) {
  return step.live_bytes + step_bytes / static_cast<std::uint64_t>(step.replicas) + framework;
}

}  // namespace

std::uint64_t framework_bytes(const model::PlatformFacts& facts) {
  return facts.gpu_framework_bytes ? facts.gpu_framework_bytes : kFrameworkBytes;
}

std::optional<GpuMemoryNeed> gpu_memory_need(const harness::HarnessEvents& events,
                                             const model::PlatformFacts& facts) {
  if (facts.gpus <= 0 || facts.gpu_memory_bytes == 0) return std::nullopt;
  const std::uint64_t framework = framework_bytes(facts);
  const harness::StepMeasure* largest = nullptr;
  for (const harness::StepMeasure& step : events.steps) {
    if (!largest ||
        need_of(step, step.step_bytes, framework) > need_of(*largest, largest->step_bytes, framework))
      largest = &step;
  }
  if (!largest) return std::nullopt;
  GpuMemoryNeed need;
  need.needed_bytes = need_of(*largest, largest->step_bytes, framework);
  need.half_batch_bytes = need_of(*largest, largest->step_bytes / 2, framework);
  need.kept_bytes = need_of(*largest, 0, framework);
  need.available_bytes = facts.gpu_memory_bytes;
  need.batch_size = largest->batch_size;
  need.replicas = largest->replicas;
  return need;
}

std::optional<model::Finding> nonfinite_loss_finding(const FailureRules& rules,
                                                     const model::RunOutcome& outcome,
                                                     const model::PlatformFacts& facts) {
  const harness::NonfiniteEvent* event =
      harness::main_or_first(outcome.events.nonfinite, outcome.events.main_pid);
  if (!event) return std::nullopt;
  model::Finding finding = from_rule(rules, "loss-nan");
  if (!event->stage.empty()) finding.stage = event->stage;
  finding.message = fmt::format("the loss became {} at training step {} (backward() call {})",
                                event->value == "nan" ? "NaN" : "infinite", event->step, event->step);
  if (outcome.exit_code == 0 && outcome.signal == 0 && !outcome.timed_out)
    finding.message += "; the job carried on and exited 0 with a model trained on it";
  finding.location = harness::location_in_code(event->where, facts.code_container_dir);
  return finding;
}

std::optional<model::Finding> gpu_memory_finding(const FailureRules& rules, const model::RunOutcome& outcome,
                                                 const model::PlatformFacts& facts) {
  auto need = gpu_memory_need(outcome.events, facts);
  if (!need || need->needed_bytes <= need->available_bytes) return std::nullopt;
  const harness::StepMeasure* step = harness::main_or_first(outcome.events.steps, outcome.events.main_pid);
  model::Finding finding = from_rule(rules, "cuda-out-of-memory");
  const std::string batch = need->batch_size ? fmt::format(" at batch size {}", *need->batch_size) : "";
  const std::string split =
      need->replicas > 1 ? fmt::format(" (DataParallel splits each batch over {} GPUs)", need->replicas) : "";
  finding.message = fmt::format(
      "a training step needs about {} of GPU memory{}{}, but the platform's {} has {}: on the platform "
      "it would stop with CUDA out of memory at the first step",
      human_size(need->needed_bytes), batch, split, facts.gpu_name.empty() ? "GPU" : facts.gpu_name,
      human_size(need->available_bytes));
  if (need->kept_bytes >= need->available_bytes) {
    // No batch fits: the parameters, their gradients and the optimizer's state alone are too many.
    const std::uint64_t framework = framework_bytes(facts);
    const std::uint64_t activations = need->needed_bytes - need->kept_bytes;
    const std::uint64_t kept = need->kept_bytes - framework;
    std::string sharded;
    if (activations + framework < need->available_bytes) {
      std::uint64_t shards = 2;
      while (kept / shards + activations + framework > need->available_bytes) shards *= 2;
      sharded = fmt::format(": over {} GPUs each needs about {}", shards,
                            human_size(kept / shards + activations + framework));
    }
    finding.hint = fmt::format(
        "The parameters, gradients and optimizer state kept between steps alone take {}, more than the "
        "GPU holds at any batch size. Shard them over GPUs (FSDP, or DeepSpeed ZeRO-3{}), train fewer "
        "parameters (LoRA adapters on a frozen bf16 model), or keep the weights and optimizer state in "
        "lower precision (bf16, an 8-bit optimizer).",
        human_size(kept), sharded);
  } else if (need->half_batch_bytes <= need->available_bytes && need->batch_size && *need->batch_size > 1) {
    finding.hint = fmt::format("At batch size {} the step needs about {}, which fits. ",
                               *need->batch_size / 2, human_size(need->half_batch_bytes)) +
                   finding.hint;
  }
  if (step) finding.location = harness::location_in_code(step->where, facts.code_container_dir);
  return finding;
}

}  // namespace preflight::diagnosis
