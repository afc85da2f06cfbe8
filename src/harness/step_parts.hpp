// The measured training step part by part (docs/harness.md "Parts of the step"): the layers,
// ops and optimizer steps the harness recorded in the step it measured, each with the
// signature that rebuilds it alone, read back as untrusted input.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace preflight::harness {

inline constexpr std::size_t kMaxStepParts = 2100;            // the harness keeps 2000, plus its sums
inline constexpr std::size_t kMaxPartSignatureBytes = 16384;  // a longer one is not rebuilt

// (bugprone-exception-escape: nlohmann::json's moves are noexcept.)
// NOLINTNEXTLINE(bugprone-exception-escape)
struct StepPart {
  std::string kind;  // "layer" | "op" | "optimizer"
  std::string name;  // torch.nn.Conv2d, torch.nn.functional.relu, Tensor.add_, torch.optim.SGD
  // What rebuilds it alone: the harness's description less its counts and times. Null when
  // the part cannot be rebuilt (`why` says why).
  nlohmann::json signature;
  // The part's identity across calls, jobs and models: the SHA-256 of its signature without
  // integer tensors' ranges (without_ranges), computed once when the event is read; "" when
  // there is no signature.
  std::string id;
  std::string why;
  long long calls = 0;
  double seconds_here = 0;  // forward, all calls, in the dry run (with the harness's hooks)
  double flops = 0;         // one call's forward
  double bytes = 0;         // one call's forward: inputs, outputs and parameters
  bool grad = false;        // called with autograd recording: it has a backward
  // A tensor input requires grad: backward computes that input's gradient too.
  bool input_grad = false;
  bool has_parameters = false;  // a layer with parameters that require grad
  std::string dtype;            // of the first floating-point input or parameter; "" if none
};

struct StepParts {
  int pid = 0;
  std::string torch_version;
  bool tf32_matmul = false;  // torch.backends.cuda.matmul.allow_tf32 in the job
  bool tf32_cudnn = false;   // torch.backends.cudnn.allow_tf32
  // The dtype CUDA autocast would run products and convolutions in ("float16", "bfloat16"),
  // when the job enters it (it does nothing without a GPU); "" when it does not.
  std::string autocast;
  int threads = 0;  // torch.get_num_threads() in the job's step; 0: not told
  std::vector<StepPart> parts;
};

// The `step_parts` event; parts beyond the bound and malformed ones are left out.
StepParts parse_step_parts(const nlohmann::json& event);

}  // namespace preflight::harness
