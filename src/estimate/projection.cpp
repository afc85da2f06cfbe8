#include "estimate/projection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "util/json_fields.hpp"
#include "util/text.hpp"

namespace preflight::estimate {

namespace {

using harness::StepPart;

constexpr std::size_t kReportedParts = 2100;

bool contains_any(std::string_view text, std::initializer_list<std::string_view> words) {
  return std::any_of(words.begin(), words.end(),
                     [&](std::string_view w) { return text.find(w) != text.npos; });
}

std::string short_name(const std::string& name) {
  const auto dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

bool computes(const std::string& work) { return work != "memory"; }

// How much more than its forward a call does, counting backward: a layer that computes gives
// its input's gradient and its weights' gradient, each about as much work as its forward; other
// work gives its input's gradient.
double work_factor(const StepPart& part, const std::string& work) {
  if (part.kind == "optimizer" || !part.grad) return 1;
  if (computes(work)) return 1 + (part.input_grad ? 1 : 0) + (part.has_parameters ? 1 : 0);
  return part.input_grad || part.has_parameters ? 2 : 1;
}

// Kernel launches of one call: the forward's, and one per gradient; an optimizer launches a
// few per parameter tensor (PyTorch's single-tensor loops; fused and foreach ones fewer).
double launches(const StepPart& part, const std::string& work) {
  if (part.kind != "optimizer") return work_factor(part, work);
  double tensors = 0;
  for (const auto& group : json_fields::list(part.signature, "groups"))
    tensors += json_fields::list(group, "params").size();
  return std::max(1.0, tensors) * 3;
}

// The GPU's dense peak, in FLOP/s, for the part's precision, and that precision's name.
std::pair<double, std::string> peak(const StepPart& part, const std::string& work, const GpuSpec& gpu,
                                    const harness::StepParts& parts) {
  constexpr double kTera = 1e12;
  // Under CUDA autocast, float32 products, convolutions and recurrent layers run in its dtype.
  const bool cast = part.dtype == "float32" && !parts.autocast.empty() && computes(work);
  const std::string dtype = cast ? parts.autocast : part.dtype;
  if (dtype == "float16" && gpu.fp16 > 0) return {gpu.fp16 * kTera, "FP16"};
  if (dtype == "bfloat16" && gpu.bf16 > 0) return {gpu.bf16 * kTera, "BF16"};
  if (part.dtype == "float64") return {gpu.fp32 * kTera / 2, "FP64"};
  const bool cudnn = work == "convolution" || work == "recurrent";
  const bool tf32 =
      (cudnn && parts.tf32_cudnn) || ((work == "matmul" || work == "attention") && parts.tf32_matmul);
  if (tf32 && gpu.tf32 > 0) return {gpu.tf32 * kTera, "TF32"};
  return {gpu.fp32 * kTera, "FP32"};
}

std::string first_shape(const StepPart& part) {
  for (const auto& input : json_fields::list(part.signature, "inputs")) {
    if (!input.is_array() || input.size() < 2 || input[0] != "T" || !input[1].is_array()) continue;
    std::string out;
    for (const auto& n : input[1]) out += (out.empty() ? "" : "x") + (n.is_number() ? n.dump() : "?");
    return out.empty() ? "scalar" : out;
  }
  return "";
}

}  // namespace

std::string work_of(const StepPart& part) {
  if (part.kind == "optimizer") return "memory";
  const std::string name = short_name(part.name);
  if (contains_any(name, {"Conv", "conv"})) return "convolution";
  if (contains_any(name, {"LSTM", "GRU", "RNN"}) || name == "lstm" || name == "gru") return "recurrent";
  if (contains_any(name, {"MultiheadAttention", "scaled_dot_product_attention"})) return "attention";
  static const std::array<std::string_view, 13> kProducts = {
      "Linear", "Bilinear", "LazyLinear", "linear", "bilinear",   "matmul", "mm",
      "bmm",    "addmm",    "baddbmm",    "addbmm", "__matmul__", "einsum"};
  if (std::find(kProducts.begin(), kProducts.end(), name) != kProducts.end()) return "matmul";
  return "memory";
}

report::StepProjection project_step(const StepInputs& inputs, const GpuSpec& gpu, const GpuTable& table) {
  report::StepProjection out;
  out.gpu = gpu.name;
  const auto& parts = *inputs.parts;
  const double replicas = std::max(1, inputs.replicas);
  const Efficiency& memory = table.efficiency("memory");
  const double bandwidth = gpu.bandwidth_gb_s * 1e9;
  std::map<std::string, double> flops_by_precision;
  std::map<std::string, double> time_by_bound;
  double gradient_bytes = 0;
  for (const StepPart& part : parts.parts) {
    report::PartEstimate row;
    row.kind = part.kind;
    row.name = part.name;
    row.shape = first_shape(part);
    row.work = work_of(part);
    row.calls = part.calls;
    const double factor = work_factor(part, row.work);
    row.flops = part.flops * factor * part.calls / replicas;
    row.bytes = part.bytes * factor * part.calls / replicas;
    // Under autocast the activations between the cast layers are half as wide.
    if (!parts.autocast.empty() && part.kind != "optimizer" && part.dtype == "float32") row.bytes /= 2;
    const double kernels = launches(part, row.work) * part.calls;
    row.launches = kernels;
    // Named values, not a structured binding: the lambda below captures them.
    const auto peak_and_precision = peak(part, row.work, gpu, parts);
    const double flops_per_second = peak_and_precision.first;
    const std::string& precision = peak_and_precision.second;
    const Efficiency& efficiency = computes(row.work) ? table.efficiency(row.work) : memory;
    const auto seconds = [&](double compute_share, double memory_share, double launch) {
      const double compute =
          computes(row.work) && flops_per_second > 0 ? row.flops / (flops_per_second * compute_share) : 0;
      return std::max(compute, row.bytes / (bandwidth * memory_share)) + kernels * launch;
    };
    row.low = seconds(efficiency.high, memory.high, table.launch.low);
    row.typical = seconds(efficiency.typical, memory.typical, table.launch.typical);
    row.high = seconds(efficiency.low, memory.low, table.launch.high);
    const double compute =
        computes(row.work) && flops_per_second > 0 ? row.flops / (flops_per_second * efficiency.typical) : 0;
    const double moved = row.bytes / (bandwidth * memory.typical);
    const double launch = kernels * table.launch.typical;
    row.bound = launch > std::max(compute, moved) ? "launch" : compute >= moved ? "compute" : "memory";
    time_by_bound[row.bound] += row.typical;
    if (computes(row.work)) flops_by_precision[precision] += row.flops;
    if (inputs.here) {
      if (auto it = inputs.here->find(part.id); it != inputs.here->end() && it->second.error.empty()) {
        row.here_seconds = (it->second.forward + it->second.backward) * part.calls;
        row.benchmarked = true;
      }
    }
    if (!row.benchmarked) row.here_seconds = part.seconds_here * factor;
    if (part.kind == "optimizer") gradient_bytes += part.bytes / 3;  // the harness counts 3 passes
    out.compute_low += row.low;
    out.compute_typical += row.typical;
    out.compute_high += row.high;
    out.parts.push_back(std::move(row));
  }
  // The loop's own time, once a step: eager PyTorch's Python between the kernels it launches,
  // the batch's copy to the GPU, a loss.item()'s synchronisation (docs/estimate.md).
  if (table.step_overhead.typical > 0) {
    out.compute_low += table.step_overhead.low;
    out.compute_typical += table.step_overhead.typical;
    out.compute_high += table.step_overhead.high;
    time_by_bound["launch"] += table.step_overhead.typical;
  }
  std::sort(out.parts.begin(), out.parts.end(),
            [](const auto& a, const auto& b) { return a.typical > b.typical; });
  if (out.parts.size() > kReportedParts) out.parts.resize(kReportedParts);
  out.precision = "FP32";
  double most = -1;
  for (const auto& [precision, flops] : flops_by_precision)
    if (flops > most) most = flops, out.precision = precision;

  const int gpus = std::max(1, inputs.gpus);
  if (gpus > 1) {
    const double link = (inputs.nodes > 1 ? table.internode_gb_s : gpu.link_gb_s) * 1e9;
    out.allreduce_seconds = 2.0 * (gpus - 1) / gpus * gradient_bytes / link;
  }
  out.data_seconds = inputs.data_seconds;
  out.data_overlaps = inputs.data_workers > 0;
  // Low: the all-reduce hidden behind backward (as DDP overlaps them); else after it.
  out.step_low = with_data_pipeline(out.compute_low, out.data_seconds, out.data_overlaps);
  out.step_typical =
      with_data_pipeline(out.compute_typical + out.allreduce_seconds, out.data_seconds, out.data_overlaps);
  out.step_high =
      with_data_pipeline(out.compute_high + out.allreduce_seconds, out.data_seconds, out.data_overlaps);

  const double computing = out.compute_typical + out.allreduce_seconds;
  if (inputs.data_seconds && *inputs.data_seconds > computing) {
    out.bound = "input";
  } else {
    const auto largest = std::max_element(time_by_bound.begin(), time_by_bound.end(),
                                          [](const auto& a, const auto& b) { return a.second < b.second; });
    out.bound = largest == time_by_bound.end() ? "compute" : largest->first;
  }
  out.basis = fmt::format(
      "{} parts of the measured step on the {}: each the larger of its FLOPs at {:.0f}–{:.0f}% of the {} "
      "peak for its kind of work and its bytes at {:.0f}–{:.0f}% of {:.0f} GB/s, plus {:.0f}–{:.0f} us per "
      "kernel launch",
      parts.parts.size(), gpu.name, table.efficiency("convolution").low * 100,
      table.efficiency("matmul").high * 100, out.precision, memory.low * 100, memory.high * 100,
      gpu.bandwidth_gb_s, table.launch.low * 1e6, table.launch.high * 1e6);
  if (table.step_overhead.typical > 0)
    out.basis += fmt::format(", and {:.1f}–{:.1f} ms a step of the loop's own", table.step_overhead.low * 1e3,
                             table.step_overhead.high * 1e3);
  if (gpu.fp32 <= 0)
    out.basis += "; the table gives no FP32 peak for it, so FP32 work counts its bytes alone";
  if (inputs.data_seconds)
    out.basis += out.data_overlaps
                     ? "; the DataLoader's workers prefetch while it computes"
                     : "; the DataLoader loads each batch in the training process, between steps";
  if (gpus > 1)
    out.basis += fmt::format("; the gradients' all-reduce over {} GPUs at {:.0f} GB/s", gpus,
                             inputs.nodes > 1 ? table.internode_gb_s : gpu.link_gb_s);
  if (inputs.total_steps) {
    out.run_hours = *inputs.total_steps * out.step_typical / 3600;
    out.gpu_hours = *out.run_hours * gpus;
    if (gpu.price) {
      out.cost_usd = *out.gpu_hours * gpu.price->usd_per_hour;
      out.price_source = gpu.price->instance;
    }
  }
  return out;
}

double with_data_pipeline(double compute, std::optional<double> data_seconds, bool overlaps) {
  if (!data_seconds) return compute;
  return overlaps ? std::max(compute, *data_seconds) : compute + *data_seconds;
}

Construction construct_here(const harness::StepParts& parts, const std::map<std::string, PartTime>& here) {
  Construction out;
  for (const StepPart& part : parts.parts) {
    ++out.parts;
    out.calls += part.calls;
    auto it = part.id.empty() ? here.end() : here.find(part.id);
    if (it != here.end() && it->second.error.empty()) {
      out.seconds += (it->second.forward + it->second.backward) * part.calls;
    } else {
      ++out.unbenchmarked;
      out.seconds += part.seconds_here * work_factor(part, work_of(part));
    }
  }
  return out;
}

}  // namespace preflight::estimate
