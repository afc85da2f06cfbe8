#include "harness/step_parts.hpp"

#include <cmath>

#include "util/json_fields.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

namespace preflight::harness {

namespace {

using json_fields::flag;
using json_fields::integer;
using json_fields::text;
using nlohmann::json;

constexpr std::size_t kMaxName = 200;
constexpr int kMaxThreads = 1024;
constexpr double kMaxCalls = 1e9;
constexpr double kMaxMagnitude = 1e24;  // FLOPs or bytes of one call

// A count or size: finite, not negative, bounded; anything else reads as 0.
double amount(const json& object, const char* key, double bound) {
  const double value = json_fields::number(object, key);
  return std::isfinite(value) && value > 0 && value <= bound ? value : 0;
}

// The tensors among a description's inputs: ["T", shape, dtype, requires_grad, ...].
void inspect_inputs(const json& value, StepPart& part, int depth = 0) {
  if (!value.is_array() || depth > 4 || value.empty()) return;
  if (value[0] == "T" && value.size() >= 4) {
    const std::string dtype = value[2].is_string() ? value[2].get<std::string>() : "";
    const bool floating = dtype.find("float") != std::string::npos;
    if (floating && part.dtype.empty()) part.dtype = dtype;
    if (value[3] == true) part.input_grad = true;
    return;
  }
  for (const auto& item : value) inspect_inputs(item, part, depth + 1);
}

// How deep a signature may nest: the harness writes tensors inside lists inside arguments, a
// few levels; a hostile event could nest thousands.
constexpr int kMaxSignatureDepth = 32;

// The signature without integer tensors' ranges (["T", shape, dtype, grad, {"range": [low,
// high]}]): the same for calls that differ only in the values of their indices, whose time does
// not depend on them. Null when it nests deeper than kMaxSignatureDepth.
json without_ranges(const json& value, int depth = 0) {
  if (depth > kMaxSignatureDepth) return nullptr;
  if (value.is_object()) {
    json out = json::object();
    for (const auto& [key, item] : value.items()) {
      if (key == "range") continue;
      out[key] = without_ranges(item, depth + 1);
      if (out[key].is_null() && !item.is_null()) return nullptr;
    }
    return out;
  }
  if (value.is_array()) {
    json out = json::array();
    for (const auto& item : value) {
      out.push_back(without_ranges(item, depth + 1));
      if (out.back().is_null() && !item.is_null()) return nullptr;
    }
    return out;
  }
  return value;
}

StepPart step_part(const json& value) {
  StepPart part;
  part.kind = text(value, "kind");
  part.name = cut_utf8(!text(value, "type").empty() ? text(value, "type") : text(value, "func"), kMaxName);
  part.calls = static_cast<long long>(amount(value, "calls", kMaxCalls));
  part.seconds_here = amount(value, "seconds_here", 1e6);
  part.flops = amount(value, "flops", kMaxMagnitude);
  part.bytes = amount(value, "bytes", kMaxMagnitude);
  part.grad = flag(value, "grad");
  inspect_inputs(value.contains("inputs") ? value["inputs"] : json(), part);
  for (const auto& param : json_fields::list(value, "params")) {
    if (!param.is_array() || param.size() < 4) continue;
    part.has_parameters = part.has_parameters || param[3] == true;
    if (part.dtype.empty() && param[2].is_string()) part.dtype = param[2].get<std::string>();
  }
  if (part.kind == "optimizer") part.has_parameters = true;
  const bool replayable = !value.contains("replayable") || value["replayable"] != false;
  if (!replayable) {
    part.why = cut_utf8(text(value, "why"), kMaxName);
    return part;
  }
  json signature = value;
  for (const char* key : {"calls", "seconds_here", "flops", "bytes"}) signature.erase(key);
  if (signature.dump().size() > kMaxPartSignatureBytes) {
    part.why = "its description is too long to rebuild it";
    return part;
  }
  const json identity = without_ranges(signature);
  if (identity.is_null()) {
    part.why = "its description nests too deep to rebuild it";
    return part;
  }
  part.id = sha256_hex(identity.dump());
  part.signature = std::move(signature);
  return part;
}

}  // namespace

StepParts parse_step_parts(const json& event) {
  StepParts out;
  out.pid = integer(event, "pid");
  out.torch_version = cut_utf8(text(event, "torch"), kMaxName);
  if (auto tf32 = event.find("tf32"); tf32 != event.end() && tf32->is_object()) {
    out.tf32_matmul = flag(*tf32, "matmul");
    out.tf32_cudnn = flag(*tf32, "cudnn");
  }
  if (const std::string autocast = text(event, "autocast"); autocast == "float16" || autocast == "bfloat16")
    out.autocast = autocast;
  if (const int threads = integer(event, "threads"); threads > 0 && threads <= kMaxThreads)
    out.threads = threads;
  for (const auto& value : json_fields::list(event, "parts")) {
    if (out.parts.size() >= kMaxStepParts) break;
    if (!value.is_object()) continue;
    StepPart part = step_part(value);
    const bool known_kind = part.kind == "layer" || part.kind == "op" || part.kind == "optimizer";
    if (known_kind && part.calls > 0 && !part.name.empty()) out.parts.push_back(std::move(part));
  }
  return out;
}

}  // namespace preflight::harness
