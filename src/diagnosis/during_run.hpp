// Findings about what happened during a run rather than how it ended, so the rule file's
// format (which describes an ending) cannot express them: a loss that turned NaN, and a
// training step that would not fit in the platform GPU's memory. Both are errors even when the
// job exited 0. Their root cause, severity, retry advice and hint come from the rule with their
// id in the rule file (the category's fix when the file has no such rule).
#pragma once

#include <cstdint>
#include <optional>

#include "diagnosis/failure_rules.hpp"
#include "model/finding.hpp"
#include "model/run_evidence.hpp"

namespace preflight::diagnosis {

// What each GPU holds besides the job's tensors (docs/harness.md "Measuring a step"; modelled,
// since the machine Preflight runs on may have no GPU to measure them on):
// - the CUDA context with PyTorch's and cuDNN's kernel images, before the first tensor: 400 MiB
//   (reported from about 300 to over 700 MiB, by card, driver and CUDA version);
inline constexpr std::uint64_t kCudaContextBytes = 400ull << 20;
// - cuBLAS's workspace, one per handle, from PyTorch's caching allocator: the default size
//   (CUBLAS_WORKSPACE_CONFIG ":4096:2:16:8", aten/src/ATen/cuda/CublasHandlePool.cpp) on cards
//   before Hopper; a training step uses two handles, the forward's thread and autograd's device
//   thread. Blocks of 1 to 10 MiB share the allocator's 20 MiB segments, so both take one.
inline constexpr std::uint64_t kCublasWorkspaceBytes = 4096ull * 1024 * 2 + 16ull * 1024 * 8;
inline constexpr std::uint64_t kCublasHandles = 2;
inline constexpr std::uint64_t kLargeSegmentBytes = 20ull << 20;
inline constexpr std::uint64_t kCublasReservedBytes =
    (kCublasHandles * kCublasWorkspaceBytes + kLargeSegmentBytes - 1) / kLargeSegmentBytes *
    kLargeSegmentBytes;
// - cuDNN's convolution workspace: none. PyTorch tries cuDNN's algorithms in turn and takes the
//   next when one's workspace does not fit (aten/src/ATen/native/cudnn/Conv_v7.cpp), down to
//   implicit GEMM, which needs none; a workspace slows a step but does not stop it.
inline constexpr std::uint64_t kFrameworkBytes = kCudaContextBytes + kCublasReservedBytes;

// The GPU memory one training step needs on each of the platform's GPUs.
// The framework's bytes on the facts' GPU: its measured `framework` (policies/gpus.yaml), else
// kFrameworkBytes.
std::uint64_t framework_bytes(const model::PlatformFacts& facts);

struct GpuMemoryNeed {
  std::uint64_t needed_bytes = 0;      // kept between steps + the step's peak + framework_bytes()
  std::uint64_t half_batch_bytes = 0;  // the same at half the batch size
  std::uint64_t kept_bytes = 0;        // kept between steps + framework_bytes(): the need at any batch
  std::uint64_t available_bytes = 0;   // the profile's GPU memory
  std::optional<int> batch_size;
  int replicas = 1;
};

// From the largest step any process measured; none without a measurement or a GPU.
std::optional<GpuMemoryNeed> gpu_memory_need(const harness::HarnessEvents& events,
                                             const model::PlatformFacts& facts);

std::optional<model::Finding> nonfinite_loss_finding(const FailureRules& rules,
                                                     const model::RunOutcome& outcome,
                                                     const model::PlatformFacts& facts);

// A predicted GPU Out of Memory, at stage train, where the measured step was.
std::optional<model::Finding> gpu_memory_finding(const FailureRules& rules, const model::RunOutcome& outcome,
                                                 const model::PlatformFacts& facts);

}  // namespace preflight::diagnosis
