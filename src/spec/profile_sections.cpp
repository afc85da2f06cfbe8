#include "spec/profile_sections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "spec/template.hpp"
#include "util/text.hpp"

namespace preflight::spec {

namespace {

const std::vector<std::string> kUserKeys = {"name", "uid", "gid", "home", "sudo"};
const std::vector<std::string> kMountKeys = {"code",    "code_writable", "input",    "output",
                                             "scratch", "working_dir",   "writable", "kept"};
const std::vector<std::string> kLimitKeys = {"memory", "shm", "disk", "pids", "cpus"};
const std::vector<std::string> kGpuKeys = {"name", "memory", "tflops"};
const std::vector<std::string> kRetryKeys = {"attempts"};
const std::vector<std::string> kHyperparameterKeys = {"arguments", "environment"};

// A string whose {{...}} variables are all known (`entry`: the extra ones of its entry).
Result<std::string> template_string(const YamlDoc& doc, const YamlField& field,
                                    const std::vector<std::string>& entry) {
  auto value = doc.string(field);
  if (!value) return value;
  bool exact = false;
  const SourceLocation where = doc.text_at(field.value, &exact);
  if (auto ok = check_template(*value, entry, where); !ok) {
    Error error = std::move(ok).error();
    error.message = field.path + ": " + error.message;
    return error;
  }
  return value;
}

// A path inside the container as a profile writes it: absolute and normalised (no "..": the
// planner checks it again once its templates are filled in), or a template such as {{code}}
// followed by one.
bool valid_container_path(const std::string& path, bool templated) {
  if (templated && path.rfind("{{", 0) == 0) {
    const auto close = path.find("}}");
    return close != std::string::npos &&
           (close + 2 == path.size() || is_normal_absolute_path(std::string_view(path).substr(close + 2)));
  }
  return is_normal_absolute_path(path);
}

constexpr const char* kPathRule = "an absolute path inside the container, without \".\", \"..\" or \"//\"";

Result<std::string> container_path(const YamlDoc& doc, const YamlField& field, bool per_entry) {
  auto value =
      template_string(doc, field, per_entry ? entry_template_variables() : std::vector<std::string>{});
  if (!value) return value;
  if (!valid_container_path(*value, true))
    return doc.error(field, fmt::format("expected {}, got \"{}\"", kPathRule, *value));
  return value;
}

Result<std::uint64_t> size(const YamlDoc& doc, const YamlField& field) {
  auto bytes = doc.size(field);
  if (!bytes) return bytes;
  if (*bytes == 0) return doc.error(field, "must be more than zero (leave it out for no limit)");
  return *bytes;
}

Result<long long> bounded(const YamlDoc& doc, const YamlField& field, long long low, long long high) {
  auto value = doc.integer(field);
  if (!value) return value;
  if (*value < low || *value > high) {
    return doc.error(field, "must be between " + std::to_string(low) + " and " + std::to_string(high) +
                                ", got " + std::to_string(*value));
  }
  return value;
}

bool valid_user_name(const std::string& name) {
  if (name.empty() || name[0] == '-' || name.size() > 32) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// "PHILLY_INPUT_{{NAME}}" is a valid variable name once its templates are filled in.
bool valid_env_name_template(const std::string& name) {
  std::string filled;
  for (std::size_t i = 0; i < name.size();) {
    const std::size_t open = name.find("{{", i);
    const std::size_t close = open == std::string::npos ? open : name.find("}}", open);
    if (close == std::string::npos) {
      filled += name.substr(i);
      break;
    }
    filled += name.substr(i, open - i) + "X";
    i = close + 2;
  }
  return is_identifier(filled);
}

}  // namespace

Status read_user(const YamlDoc& doc, const YamlField& section, PlatformUser& user) {
  auto fields = doc.fields(section, kUserKeys);
  if (!fields) return std::move(fields).error();
  for (const YamlField& field : *fields) {
    if (field.key == "name") {
      auto value = doc.string(field);
      if (!value) return std::move(value).error();
      if (!valid_user_name(*value)) return doc.error(field, "\"" + *value + "\" is not a user name");
      user.name = *value;
    } else if (field.key == "uid" || field.key == "gid") {
      auto value = bounded(doc, field, 0, 4294967294LL);
      if (!value) return std::move(value).error();
      (field.key == "uid" ? user.uid : user.gid) = static_cast<unsigned>(*value);
    } else if (field.key == "home") {
      auto value = doc.string(field);
      if (!value) return std::move(value).error();
      if (!valid_container_path(*value, false))
        return doc.error(field, fmt::format("expected {}, got \"{}\"", kPathRule, *value));
      user.home = *value;
    } else if (field.key == "sudo") {
      auto value = doc.boolean(field);
      if (!value) return std::move(value).error();
      user.sudo = *value;
    }
  }
  return Ok{};
}

Status read_mounts(const YamlDoc& doc, const YamlField& section, MountLayout& mounts) {
  auto fields = doc.fields(section, kMountKeys);
  if (!fields) return std::move(fields).error();
  for (const YamlField& field : *fields) {
    if (field.key == "writable" || field.key == "kept") {
      auto list = doc.string_list(field);
      if (!list) return std::move(list).error();
      const bool templated = field.key == "kept";  // {{code}}/outputs: AzureML's uploaded folder
      for (const std::string& path : *list) {
        if (!valid_container_path(path, templated) || path == "/")
          return doc.error(field, fmt::format("expected {} other than \"/\", got \"{}\"", kPathRule, path));
        if (templated) {
          if (auto ok = check_template(path, false, doc.at(field)); !ok) {
            Error error = std::move(ok).error();
            error.message = field.path + ": " + error.message;
            return error;
          }
        }
      }
      (field.key == "writable" ? mounts.writable : mounts.kept) = std::move(*list);
      continue;
    }
    if (field.key == "code_writable") {
      auto value = doc.boolean(field);
      if (!value) return std::move(value).error();
      mounts.code_writable = *value;
      continue;
    }
    if (field.key == "scratch" && field.value.IsNull()) {
      mounts.scratch.clear();
      continue;
    }
    const bool per_entry = field.key == "input" || field.key == "output";
    auto value = container_path(doc, field, per_entry);
    if (!value) return std::move(value).error();
    if (per_entry && value->find("{{name}}") == std::string::npos &&
        value->find("{{NAME}}") == std::string::npos) {
      return doc.error(field, "must contain {{name}} so that each " + field.key + " gets its own folder");
    }
    if (field.key == "code") mounts.code = *value;
    if (field.key == "input") mounts.input = *value;
    if (field.key == "output") mounts.output = *value;
    if (field.key == "scratch") mounts.scratch = *value;
    if (field.key == "working_dir") mounts.working_dir = *value;
  }
  return Ok{};
}

Status read_limits(const YamlDoc& doc, const YamlField& section, ResourceLimits& limits) {
  auto fields = doc.fields(section, kLimitKeys);
  if (!fields) return std::move(fields).error();
  for (const YamlField& field : *fields) {
    if (field.key == "memory" || field.key == "shm" || field.key == "disk") {
      auto bytes = size(doc, field);
      if (!bytes) return std::move(bytes).error();
      (field.key == "memory" ? limits.memory_bytes
       : field.key == "shm"  ? limits.shm_bytes
                             : limits.disk_bytes) = *bytes;
    } else if (field.key == "pids") {
      auto value = bounded(doc, field, 1, 4194304);
      if (!value) return std::move(value).error();
      limits.pids = static_cast<int>(*value);
    } else if (field.key == "cpus") {
      auto value = doc.number(field);
      if (!value) return std::move(value).error();
      if (!(*value > 0) || *value > 4096) return doc.error(field, "must be more than zero");
      limits.cpus = *value;
    }
  }
  return Ok{};
}

Status read_gpu(const YamlDoc& doc, const YamlField& section, GpuModel& gpu) {
  auto fields = doc.fields(section, kGpuKeys);
  if (!fields) return std::move(fields).error();
  for (const YamlField& field : *fields) {
    if (field.key == "name") {
      auto value = doc.string(field);
      if (!value) return std::move(value).error();
      gpu.name = *value;
    } else if (field.key == "tflops") {
      auto value = doc.number(field);
      if (!value) return std::move(value).error();
      if (!(*value > 0) || *value > 100000) return doc.error(field, "must be more than zero");
      gpu.tflops = *value;
    } else {
      auto bytes = size(doc, field);
      if (!bytes) return std::move(bytes).error();
      gpu.memory_bytes = *bytes;
    }
  }
  return Ok{};
}

Status read_retry(const YamlDoc& doc, const YamlField& section, int& attempts) {
  auto fields = doc.fields(section, kRetryKeys);
  if (!fields) return std::move(fields).error();
  for (const YamlField& field : *fields) {
    auto value = bounded(doc, field, 1, 100);
    if (!value) return std::move(value).error();
    attempts = static_cast<int>(*value);
  }
  return Ok{};
}

Result<std::vector<EnvTemplate>> read_environment(const YamlDoc& doc, const YamlField& section,
                                                  const std::vector<std::string>& entry) {
  auto fields = doc.fields(section, {});
  if (!fields) return std::move(fields).error();
  std::vector<EnvTemplate> out;
  for (const YamlField& field : *fields) {
    bool exact = false;
    const SourceLocation key_where = doc.text_at(field.key_node, &exact);
    if (auto ok = check_template(field.key, entry, key_where); !ok) {
      return std::move(ok).error();
    }
    if (!valid_env_name_template(field.key)) {
      return Error::bad_input("environment variable name \"" + field.key +
                                  "\" must be letters, digits and \"_\", not starting with a digit",
                              doc.at(field.key_node));
    }
    if (field.value.IsNull()) {
      return doc.error(field, "expected a value, got nothing (write \"\" for an empty string)");
    }
    auto value = template_string(doc, field, entry);
    if (!value) return std::move(value).error();
    out.push_back(EnvTemplate{field.key, *value, doc.text_at(field.value, &exact)});
  }
  return out;
}

Status read_hyperparameter_delivery(const YamlDoc& doc, const YamlField& section,
                                    HyperparameterDelivery& delivery) {
  auto fields = doc.fields(section, kHyperparameterKeys);
  if (!fields) return std::move(fields).error();
  for (const YamlField& field : *fields) {
    if (field.key == "arguments") {
      auto value = doc.boolean(field);
      if (!value) return std::move(value).error();
      delivery.arguments = *value;
    } else {
      auto env = read_environment(doc, field, hyperparameter_template_variables());
      if (!env) return std::move(env).error();
      delivery.environment = std::move(*env);
    }
  }
  return Ok{};
}

Result<std::vector<PlatformFile>> read_files(const YamlDoc& doc, const YamlField& section) {
  auto fields = doc.fields(section, {});
  if (!fields) return std::move(fields).error();
  std::vector<PlatformFile> files;
  for (const YamlField& field : *fields) {
    if (!valid_container_path(field.key, false) || field.key == "/") {
      return Error::bad_input(fmt::format("files: \"{}\" must be {}", field.key, kPathRule),
                              doc.at(field.key_node));
    }
    auto content = template_string(doc, field, {});
    if (!content) return std::move(content).error();
    bool exact = false;
    files.push_back(PlatformFile{field.key, *content, doc.text_at(field.value, &exact)});
  }
  return files;
}

Result<std::string> read_input_config(const YamlDoc& doc, const YamlField& section) {
  auto fields = doc.fields(section, {});
  if (!fields) return std::move(fields).error();
  nlohmann::json object = nlohmann::json::object();
  for (const YamlField& field : *fields) {
    auto value = doc.string(field);
    if (!value) return std::move(value).error();
    object[field.key] = *value;
  }
  return object.dump();
}

}  // namespace preflight::spec
