#include "spec/platform_profile.hpp"

#include <algorithm>
#include <set>

#include "spec/profile_sections.hpp"
#include "spec/template.hpp"
#include "spec/yaml_doc.hpp"
#include "util/data_dir.hpp"
#include "util/did_you_mean.hpp"

namespace preflight::spec {

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kProfileKeys = {"name",
                                               "description",
                                               "default_image",
                                               "hostname",
                                               "user",
                                               "mounts",
                                               "network",
                                               "seccomp",
                                               "limits",
                                               "gpu",
                                               "environment",
                                               "input_environment",
                                               "output_environment",
                                               "input_config",
                                               "hyperparameters",
                                               "files",
                                               "launcher",
                                               "retry"};

// What a container runtime refuses by default; docs/formats.md.
constexpr const char* kDefaultSeccompPolicy = "default";

bool is_profile_file(const fs::path& path) {
  return path.extension() == ".yaml" || path.extension() == ".yml";
}

bool names_a_file(const std::string& name_or_file) {
  return name_or_file.find('/') != std::string::npos || is_profile_file(name_or_file);
}

Status read_field(const YamlDoc& doc, const YamlField& field, PlatformProfile& profile) {
  if (field.key == "name" || field.key == "description" || field.key == "default_image") {
    auto value = doc.string(field);
    if (!value) return std::move(value).error();
    if (field.key != "description" && value->empty()) return doc.error(field, "must not be empty");
    (field.key == "name"          ? profile.name
     : field.key == "description" ? profile.description
                                  : profile.default_image) = *value;
  } else if (field.key == "hostname") {
    auto value = doc.string(field);
    if (!value) return std::move(value).error();
    bool exact = false;
    if (auto ok = check_template(*value, false, doc.text_at(field.value, &exact)); !ok) return ok;
    profile.hostname = *value;
  } else if (field.key == "network") {
    auto value = doc.boolean(field);
    if (!value) return std::move(value).error();
    profile.network = *value;
    profile.network_at = doc.at(field);
  } else if (field.key == "seccomp") {
    auto value = doc.string(field);
    if (!value) return std::move(value).error();
    auto policy = load_seccomp_policy(*value, shipped_seccomp_dir());
    if (!policy && !policy.error().where.known()) return doc.error(field, policy.error().message);
    if (!policy) return std::move(policy).error();
    profile.seccomp = std::move(*policy);
    profile.seccomp_at = doc.at(field);
  } else if (field.key == "user") {
    return read_user(doc, field, profile.user);
  } else if (field.key == "mounts") {
    return read_mounts(doc, field, profile.mounts);
  } else if (field.key == "limits") {
    return read_limits(doc, field, profile.limits);
  } else if (field.key == "gpu") {
    return read_gpu(doc, field, profile.gpu);
  } else if (field.key == "environment") {
    auto env = read_environment(doc, field, {});
    if (!env) return std::move(env).error();
    profile.environment = std::move(*env);
  } else if (field.key == "input_environment" || field.key == "output_environment") {
    auto env = read_environment(doc, field, entry_template_variables());
    if (!env) return std::move(env).error();
    (field.key == "input_environment" ? profile.input_environment : profile.output_environment) =
        std::move(*env);
  } else if (field.key == "input_config") {
    auto json = read_input_config(doc, field);
    if (!json) return std::move(json).error();
    profile.input_config_json = std::move(*json);
  } else if (field.key == "hyperparameters") {
    return read_hyperparameter_delivery(doc, field, profile.hyperparameters);
  } else if (field.key == "files") {
    auto files = read_files(doc, field);
    if (!files) return std::move(files).error();
    profile.files = std::move(*files);
  } else if (field.key == "launcher") {
    auto value = doc.string_list(field);
    if (!value) return std::move(value).error();
    if (value->empty()) return doc.error(field, "must name a program, e.g. [/bin/sh, -c]");
    profile.launcher = std::move(*value);
  } else if (field.key == "retry") {
    return read_retry(doc, field, profile.retry_attempts);
  }
  return Ok{};
}

Result<PlatformProfile> load_profile_file(const fs::path& file) {
  auto doc = YamlDoc::load(file);
  if (!doc) return std::move(doc).error();
  if (doc->root().IsNull()) {
    return Error::bad_input("the platform profile is empty", SourceLocation{file, 1, 1});
  }
  auto fields = doc->fields(doc->root(), "", kProfileKeys);
  if (!fields) return std::move(fields).error();
  PlatformProfile profile;
  profile.file = fs::absolute(file).lexically_normal();
  profile.name = file.stem().string();
  for (const YamlField& field : *fields) {
    if (auto ok = read_field(*doc, field, profile); !ok) return std::move(ok).error();
  }
  if (profile.seccomp.name.empty()) {
    auto policy = load_seccomp_policy(kDefaultSeccompPolicy, shipped_seccomp_dir());
    if (!policy) return std::move(policy).error();
    profile.seccomp = std::move(*policy);
  }
  return profile;
}

}  // namespace

fs::path shipped_platforms_dir() { return data_dir() / "policies" / "platforms"; }

std::vector<std::string> list_platforms(const fs::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && is_profile_file(it->path())) {
      names.insert(it->path().stem().string());
    }
  }
  return {names.begin(), names.end()};
}

Result<PlatformProfile> load_platform(const std::string& name_or_file, const fs::path& dir) {
  if (name_or_file.empty()) return Error::bad_input("the platform name is empty");
  if (names_a_file(name_or_file)) {
    std::error_code ec;
    if (!fs::exists(name_or_file, ec)) {
      return Error::bad_input("platform profile " + name_or_file + " does not exist");
    }
    // Named by a job file, it may be any file of the host: only a .yaml or .yml file is
    // read, so that no other file's content reaches a message.
    if (!is_profile_file(name_or_file))
      return Error::bad_input("platform profile " + name_or_file +
                              " is not a .yaml or .yml file; name a profile file or a shipped platform");
    return load_profile_file(name_or_file);
  }
  for (const char* extension : {".yaml", ".yml"}) {
    const fs::path file = dir / (name_or_file + extension);
    std::error_code ec;
    if (fs::exists(file, ec)) return load_profile_file(file);
  }
  const std::vector<std::string> shipped = list_platforms(dir);
  std::string known;
  for (const std::string& name : shipped) known += (known.empty() ? "" : ", ") + name;
  return Error::bad_input(
      "unknown platform \"" + name_or_file + "\"" + did_you_mean(name_or_file, shipped) +
      (shipped.empty() ? " (no profiles in " + dir.string() + ")" : " (shipped: " + known + ")"));
}

}  // namespace preflight::spec
