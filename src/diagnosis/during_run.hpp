// Findings about what happened during a run rather than how it ended, so the rule file's
// format (which describes an ending) cannot express them: a loss that turned NaN, and a
// training step that would not fit in the platform GPU's memory. Both are errors even when the
// job exited 0. Their root cause, severity, retry advice and hint come from the rule with their
// id in the rule file (the category's fix when the file has no such rule).
#pragma once

#include <cstdint>
#include <optional>

#include "diagnosis/evidence.hpp"
#include "diagnosis/failure_rules.hpp"
#include "report/finding.hpp"

namespace preflight::diagnosis {

// What the CUDA context and PyTorch's kernels take on each GPU before the first tensor
// (docs/harness.md "Measuring a step": a modelled constant, not measured here).
inline constexpr std::uint64_t kCudaContextBytes = 400ull << 20;

// The GPU memory one training step needs on each of the platform's GPUs.
struct GpuMemoryNeed {
  std::uint64_t needed_bytes = 0;      // kept between steps + the step's peak + CUDA context
  std::uint64_t half_batch_bytes = 0;  // the same at half the batch size
  std::uint64_t available_bytes = 0;   // the profile's GPU memory
  std::optional<int> batch_size;
  int replicas = 1;
};

// From the largest step any process measured; none without a measurement or a GPU.
std::optional<GpuMemoryNeed> gpu_memory_need(const harness::HarnessEvents& events, const PlatformFacts& facts);

std::optional<report::Finding> nonfinite_loss_finding(const FailureRules& rules, const RunOutcome& outcome,
                                                      const PlatformFacts& facts);

// A predicted GPU Out of Memory, at stage train, where the measured step was.
std::optional<report::Finding> gpu_memory_finding(const FailureRules& rules, const RunOutcome& outcome,
                                                  const PlatformFacts& facts);

}  // namespace preflight::diagnosis
