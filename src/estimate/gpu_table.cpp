#include "estimate/gpu_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "spec/yaml_doc.hpp"
#include "util/data_dir.hpp"
#include "util/text.hpp"

namespace preflight::estimate {

namespace {

using spec::YamlDoc;
using spec::YamlField;

const std::vector<std::string> kTableKeys = {"gpus", "efficiency", "internode_gb_s"};
const std::vector<std::string> kGpuKeys = {"name",      "aliases", "memory", "framework", "tflops",
                                           "bandwidth", "link",    "price",  "sources"};
const std::vector<std::string> kTflopsKeys = {"fp32", "tf32", "fp16", "bf16"};
const std::vector<std::string> kPriceKeys = {"usd_per_hour", "instance", "source"};
const std::vector<std::string> kRangeKeys = {"low", "typical", "high", "source"};
constexpr const char* kLaunchKey = "launch_seconds";
constexpr const char* kStepOverheadKey = "step_overhead_seconds";

// Far above any GPU's figure: a value past them is a slip of the unit (GB/s written as MB/s),
// and stopping it here keeps the arithmetic of an estimate finite.
constexpr double kMaxTflops = 1e5;
constexpr double kMaxGbPerSecond = 1e6;
constexpr double kMaxUsdPerHour = 1e4;
constexpr double kMaxLaunchSeconds = 1;

// What find() compares: lower case, without surrounding spaces and a leading "nvidia ".
std::string match_key(std::string_view name) {
  std::string key(trim_view(name));
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  constexpr std::string_view kVendor = "nvidia ";
  if (key.rfind(kVendor, 0) == 0) key = trim(std::string_view(key).substr(kVendor.size()));
  return key;
}

// A finite number more than zero and at most `most`.
Result<double> positive(const YamlDoc& doc, const YamlField& field, double most) {
  auto value = doc.number(field);
  if (!value) return value;
  if (!std::isfinite(*value) || *value <= 0)
    return doc.error(field, fmt::format("must be more than zero, got {}", spec::describe(field.value)));
  if (*value > most)
    return doc.error(field, fmt::format("{} is more than {:g}; check the unit", *value, most));
  return value;
}

// A fraction of a peak: more than 0 and at most 1.
Result<double> fraction(const YamlDoc& doc, const YamlField& field) {
  auto value = doc.number(field);
  if (!value) return value;
  if (!std::isfinite(*value) || *value <= 0 || *value > 1) {
    return doc.error(field, fmt::format("must be a fraction of the peak, more than 0 and at most 1, got {}",
                                        spec::describe(field.value)));
  }
  return value;
}

Result<std::string> text(const YamlDoc& doc, const YamlField& field) {
  auto value = doc.string(field);
  if (!value) return value;
  if (trim_view(*value).empty()) return doc.error(field, "must not be empty");
  return value;
}

Result<std::vector<std::string>> texts(const YamlDoc& doc, const YamlField& field) {
  auto list = doc.string_list(field);
  if (!list) return list;
  for (std::size_t i = 0; i < list->size(); ++i) {
    if (trim_view((*list)[i]).empty())
      return Error::bad_input(fmt::format("{}[{}]: must not be empty", field.path, i),
                              doc.at(field.value[i]));
  }
  return list;
}

// An error at the map `node` for a key it lacks.
Error missing(const YamlDoc& doc, const YAML::Node& node, const std::string& path, const std::string& key) {
  return Error::bad_input(fmt::format("{}: missing \"{}\"", path, key), doc.at(node));
}

Status read_tflops(const YamlDoc& doc, const YamlField& section, GpuSpec& gpu) {
  auto fields = doc.fields(section, kTflopsKeys);
  if (!fields) return std::move(fields).error();
  for (const YamlField& field : *fields) {
    auto value = positive(doc, field, kMaxTflops);
    if (!value) return std::move(value).error();
    (field.key == "fp32"   ? gpu.fp32
     : field.key == "tf32" ? gpu.tf32
     : field.key == "fp16" ? gpu.fp16
                           : gpu.bf16) = *value;
  }
  return Ok{};
}

Status read_price(const YamlDoc& doc, const YamlField& section, GpuSpec& gpu) {
  auto fields = doc.fields(section, kPriceKeys);
  if (!fields) return std::move(fields).error();
  GpuPrice price;
  for (const YamlField& field : *fields) {
    if (field.key == "usd_per_hour") {
      auto value = positive(doc, field, kMaxUsdPerHour);
      if (!value) return std::move(value).error();
      price.usd_per_hour = *value;
    } else {
      auto value = text(doc, field);
      if (!value) return std::move(value).error();
      (field.key == "instance" ? price.instance : price.source) = *value;
    }
  }
  // Its instance and list are what make a price checkable, and a price goes stale.
  const YAML::Node& node = section.value.IsNull() ? section.key_node : section.value;
  if (price.usd_per_hour == 0) return missing(doc, node, section.path, "usd_per_hour");
  if (price.instance.empty()) return missing(doc, node, section.path, "instance");
  if (price.source.empty()) return missing(doc, node, section.path, "source");
  gpu.price = std::move(price);
  return Ok{};
}

Status read_gpu_field(const YamlDoc& doc, const YamlField& field, GpuSpec& gpu) {
  if (field.key == "name") {
    auto value = text(doc, field);
    if (!value) return std::move(value).error();
    gpu.name = trim(*value);
  } else if (field.key == "aliases" || field.key == "sources") {
    auto list = texts(doc, field);
    if (!list) return std::move(list).error();
    (field.key == "aliases" ? gpu.aliases : gpu.sources) = std::move(*list);
  } else if (field.key == "memory" || field.key == "framework") {
    auto bytes = doc.size(field);
    if (!bytes) return std::move(bytes).error();
    if (*bytes == 0) return doc.error(field, "must be more than zero");
    (field.key == "memory" ? gpu.memory_bytes : gpu.framework_bytes) = *bytes;
  } else if (field.key == "bandwidth" || field.key == "link") {
    auto value = positive(doc, field, kMaxGbPerSecond);
    if (!value) return std::move(value).error();
    (field.key == "bandwidth" ? gpu.bandwidth_gb_s : gpu.link_gb_s) = *value;
  } else if (field.key == "tflops") {
    return read_tflops(doc, field, gpu);
  } else if (field.key == "price") {
    return read_price(doc, field, gpu);
  }
  return Ok{};
}

Result<GpuSpec> read_gpu(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  auto fields = doc.fields(node, path, kGpuKeys);
  if (!fields) return std::move(fields).error();
  GpuSpec gpu;
  for (const YamlField& field : *fields) {
    if (auto ok = read_gpu_field(doc, field, gpu); !ok) return std::move(ok).error();
  }
  // Without a name it cannot be found, without memory or bandwidth it cannot be estimated.
  if (gpu.name.empty()) return missing(doc, node, path, "name");
  if (gpu.memory_bytes == 0) return missing(doc, node, path, "memory");
  if (gpu.bandwidth_gb_s == 0) return missing(doc, node, path, "bandwidth");
  return gpu;
}

// Where a name or alias was first given, to point back at it.
struct NameUse {
  std::string gpu;
  int line = 0;
};

// A name or alias that another entry (or this one) already has would make find() depend on
// the order of the file.
Status claim_name(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                  const std::string& name, const std::string& gpu, std::map<std::string, NameUse>& used) {
  const std::string key = match_key(name);
  if (key.empty()) return Error::bad_input(path + ": must not be empty", doc.at(node));
  if (auto previous = used.find(key); previous != used.end()) {
    return Error::bad_input(
        fmt::format("{}: \"{}\" is already a name or alias of \"{}\" (line {}); names must differ "
                    "ignoring case and a leading \"NVIDIA \"",
                    path, name, previous->second.gpu, previous->second.line),
        doc.at(node));
  }
  used.emplace(key, NameUse{gpu, doc.at(node).line});
  return Ok{};
}

Result<std::vector<GpuSpec>> read_gpus(const YamlDoc& doc, const YamlField& section) {
  if (!section.value.IsSequence()) {
    return doc.error(section, "expected a list of GPUs, got " + spec::describe(section.value));
  }
  if (section.value.size() == 0) return doc.error(section, "must list at least one GPU");
  std::vector<GpuSpec> gpus;
  std::map<std::string, NameUse> used;
  for (std::size_t i = 0; i < section.value.size(); ++i) {
    const YAML::Node node = section.value[i];
    const std::string path = fmt::format("gpus[{}]", i);
    auto gpu = read_gpu(doc, node, path);
    if (!gpu) return std::move(gpu).error();
    if (auto ok = claim_name(doc, node["name"], path + ".name", gpu->name, gpu->name, used); !ok)
      return std::move(ok).error();
    for (std::size_t j = 0; j < gpu->aliases.size(); ++j) {
      const std::string alias_path = fmt::format("{}.aliases[{}]", path, j);
      if (auto ok = claim_name(doc, node["aliases"][j], alias_path, gpu->aliases[j], gpu->name, used); !ok)
        return std::move(ok).error();
    }
    gpus.push_back(std::move(*gpu));
  }
  return gpus;
}

// {low, typical, high}: fractions of a peak in (0, 1], or seconds (a launch, a step's overhead).
Result<Efficiency> read_range(const YamlDoc& doc, const YamlField& section, bool seconds) {
  auto fields = doc.fields(section, kRangeKeys);
  if (!fields) return std::move(fields).error();
  Efficiency range;
  for (const YamlField& field : *fields) {
    if (field.key == "source") {
      auto value = text(doc, field);
      if (!value) return std::move(value).error();
      range.source = *value;
      continue;
    }
    auto value = seconds ? positive(doc, field, kMaxLaunchSeconds) : fraction(doc, field);
    if (!value) return std::move(value).error();
    (field.key == "low" ? range.low : field.key == "typical" ? range.typical : range.high) = *value;
  }
  const YAML::Node& node = section.value.IsNull() ? section.key_node : section.value;
  const std::pair<const char*, double> given[] = {
      {"low", range.low}, {"typical", range.typical}, {"high", range.high}};
  for (const auto& [key, value] : given) {
    if (value == 0) return missing(doc, node, section.path, key);
  }
  if (range.low > range.typical || range.typical > range.high) {
    return doc.error(section, fmt::format("low, typical and high must not decrease, got {:g}, {:g}, {:g}",
                                          range.low, range.typical, range.high));
  }
  return range;
}

Status read_efficiency(const YamlDoc& doc, const YamlField& section, GpuTable& table) {
  std::vector<std::string> keys = gpu_work_kinds();
  keys.emplace_back(kLaunchKey);
  keys.emplace_back(kStepOverheadKey);
  auto fields = doc.fields(section, keys);
  if (!fields) return std::move(fields).error();
  for (const YamlField& field : *fields) {
    const bool launch = field.key == kLaunchKey;
    const bool overhead = field.key == kStepOverheadKey;
    auto range = read_range(doc, field, launch || overhead);
    if (!range) return std::move(range).error();
    if (launch) {
      table.launch = std::move(*range);
    } else if (overhead) {
      table.step_overhead = std::move(*range);
    } else {
      table.efficiencies[field.key] = std::move(*range);
    }
  }
  // The estimate asks for every kind, and a kind left out would fail there, far from here.
  const YAML::Node& node = section.value.IsNull() ? section.key_node : section.value;
  for (const std::string& kind : gpu_work_kinds()) {
    if (!table.efficiencies.count(kind)) return missing(doc, node, section.path, kind);
  }
  if (table.launch.typical == 0) return missing(doc, node, section.path, kLaunchKey);
  return Ok{};
}

Status read_table_field(const YamlDoc& doc, const YamlField& field, GpuTable& table) {
  if (field.key == "gpus") {
    auto gpus = read_gpus(doc, field);
    if (!gpus) return std::move(gpus).error();
    table.gpus = std::move(*gpus);
  } else if (field.key == "efficiency") {
    return read_efficiency(doc, field, table);
  } else if (field.key == "internode_gb_s") {
    auto value = positive(doc, field, kMaxGbPerSecond);
    if (!value) return std::move(value).error();
    table.internode_gb_s = *value;
  }
  return Ok{};
}

}  // namespace

const std::vector<std::string>& gpu_work_kinds() {
  static const std::vector<std::string> kKinds = {"matmul", "convolution", "recurrent", "attention",
                                                  "memory"};
  return kKinds;
}

const GpuSpec* GpuTable::find(std::string_view name) const {
  const std::string key = match_key(name);
  if (key.empty()) return nullptr;
  for (const GpuSpec& gpu : gpus) {
    if (match_key(gpu.name) == key) return &gpu;
    for (const std::string& alias : gpu.aliases) {
      if (match_key(alias) == key) return &gpu;
    }
  }
  return nullptr;
}

std::vector<std::string> GpuTable::names() const {
  std::vector<std::string> out;
  for (const GpuSpec& gpu : gpus) {
    out.push_back(gpu.name);
    out.insert(out.end(), gpu.aliases.begin(), gpu.aliases.end());
  }
  return out;
}

Result<GpuTable> load_gpu_table(const std::filesystem::path& file) {
  auto doc = YamlDoc::load(file);
  if (!doc) return std::move(doc).error();
  if (doc->root().IsNull()) return Error::bad_input("the GPU table is empty", SourceLocation{file, 1, 1});
  auto fields = doc->fields(doc->root(), "", kTableKeys);
  if (!fields) return std::move(fields).error();
  GpuTable table;
  table.file = file;
  for (const YamlField& field : *fields) {
    if (auto ok = read_table_field(*doc, field, table); !ok) return std::move(ok).error();
  }
  for (const std::string& key : kTableKeys) {
    const bool given =
        std::any_of(fields->begin(), fields->end(), [&](const YamlField& f) { return f.key == key; });
    if (!given) return missing(*doc, doc->root(), "the GPU table", key);
  }
  return table;
}

std::filesystem::path shipped_gpu_table() { return data_dir() / "policies" / "gpus.yaml"; }

}  // namespace preflight::estimate
