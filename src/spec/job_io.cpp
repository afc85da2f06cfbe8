#include "spec/job_io.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "util/text.hpp"

namespace preflight::spec {

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kInputKeys = {"path", "type", "mode", "description", "mount"};
const std::vector<std::string> kOutputKeys = {"type",    "mode",        "path", "name",
                                              "version", "description", "mount"};
// AzureML's data types; mltable and the model types are folders here.
const std::vector<std::string> kDataTypes = {"uri_folder",   "uri_file",     "mltable",
                                             "mlflow_model", "custom_model", "triton_model"};
const std::vector<std::string> kInputModes = {"ro_mount", "rw_mount",   "download",
                                              "direct",   "eval_mount", "eval_download"};
const std::vector<std::string> kOutputModes = {"rw_mount", "upload", "direct"};

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Names become upper-case environment variables (PHILLY_INPUT_DATA), so they must be
// identifiers and must differ in more than case.
Status check_name(const YamlDoc& doc, const YamlField& entry, const std::string& kind,
                  std::vector<const YamlField*>& seen) {
  if (!is_identifier(entry.key)) {
    return Error::bad_input(kind + " name \"" + entry.key +
                                "\" must be an identifier (letters, digits and \"_\", not "
                                "starting with a digit)",
                            doc.at(entry.key_node));
  }
  for (const YamlField* other : seen) {
    if (lower(other->key) == lower(entry.key)) {
      return Error::bad_input(kind + " \"" + entry.key + "\" differs from " + kind + " \"" + other->key +
                                  "\" (line " + std::to_string(doc.at(other->key_node).line) +
                                  ") only in case; the platform exports both as the same "
                                  "upper-case variable",
                              doc.at(entry.key_node));
    }
  }
  seen.push_back(&entry);
  return Ok{};
}

// `origin` says where `resolved` came from: the path written and its folder, or the map
// that gave a cloud path its local copy.
Status check_path(const YamlDoc& doc, const YamlField& field, const std::string& name,
                  const std::string& origin, const fs::path& resolved, const std::string& type) {
  std::error_code ec;
  const auto status = fs::status(resolved, ec);
  if (!fs::exists(status)) {
    return doc.error(field, "input \"" + name + "\": " + resolved.string() + " does not exist (" + origin +
                                "); put a local copy or small sample of the data the platform "
                                "will mount there, or correct path:");
  }
  // Mounted into the container and sampled: a FIFO or a device (/dev/zero) never ends.
  if ((!fs::is_directory(status) && !fs::is_regular_file(status)) || is_system_folder(resolved)) {
    return doc.error(field, "input \"" + name + "\": " + resolved.string() +
                                " is not a folder or a regular file of data (or is a system folder); "
                                "set path: to a local copy or sample of the data");
  }
  if (type == "uri_file" && fs::is_directory(status)) {
    return doc.error(field, "input \"" + name + "\" has type uri_file but " + resolved.string() +
                                " is a folder; use type: uri_folder");
  }
  if (type != "uri_file" && !type.empty() && !fs::is_directory(status)) {
    return doc.error(field, "input \"" + name + "\" has type " + type + " but " + resolved.string() +
                                " is not a folder; use type: uri_file");
  }
  return Ok{};
}

// Where a map's prefix came from, for messages: the job's paths: entry or --map.
std::string map_origin(const std::string& written, const std::vector<PathMap>& maps) {
  const PathMap* best = find_path_map(written, maps);
  if (!best) return {};
  return best->where.known() ? "paths: entry " + best->where.str()
                             : "--map " + best->prefix + "=" + best->local.string();
}

Result<InputSpec> read_input(const YamlDoc& doc, const YamlField& entry, const fs::path& job_dir,
                             const std::vector<PathMap>& maps, const HostGrant& grant) {
  InputSpec input{entry.key, {}, doc.at(entry.key_node), std::nullopt, doc.at(entry), {}, {}};
  if (entry.value.IsScalar() && is_literal(entry.value)) {
    input.value = entry.value.Scalar();
    return input;
  }
  std::string type;
  std::optional<YamlField> path_field;
  if (entry.value.IsScalar()) {
    path_field = entry;
  } else if (entry.value.IsMap()) {
    auto fields = doc.fields(entry, kInputKeys);
    if (!fields) return std::move(fields).error();
    for (const YamlField& field : *fields) {
      if (field.key == "path") {
        path_field = field;
      } else if (field.key == "mount") {
        auto mount = read_mount(doc, field);
        if (!mount) return std::move(mount).error();
        input.mount = *mount;
      } else if (field.key == "type") {
        auto value = doc.one_of(field, kDataTypes);
        if (!value) return std::move(value).error();
        type = *value;
      } else if (field.key == "mode") {
        auto value = doc.one_of(field, kInputModes);
        if (!value) return std::move(value).error();
      } else if (auto text = doc.string(field); !text) {
        return std::move(text).error();
      }
    }
    if (!path_field) {
      return Error::bad_input(
          "missing required key \"path\" in " + entry.path + " (a local copy or sample of the data)",
          doc.at(entry.value));
    }
  } else {
    return doc.error(entry, "expected a path or {path: ...}, got " + describe(entry.value));
  }
  auto written = doc.string(*path_field);
  if (!written) return std::move(written).error();
  input.path_where = doc.at(*path_field);
  if (written->empty()) return doc.error(*path_field, "the path is empty");
  std::string origin = "path \"" + *written + "\", relative to " + job_dir.string();
  if (is_cloud_path(*written)) {
    // As Kubernetes refuses ".." in a subPath: the rest of a cloud path stays in its local copy.
    if (climbs_out(*written))
      return doc.error(*path_field, "\"" + *written +
                                        "\" has a \"..\" component, which would climb out of the local copy "
                                        "its --map or paths: entry gives; write the path without it");
    auto local = map_cloud_path(*written, maps);
    if (!local) {
      std::string prefix = *written;
      while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
      return doc.error(*path_field,
                       "\"" + *written +
                           "\" is where the platform has the data; Preflight needs a local copy or "
                           "sample of it: add --map " +
                           prefix + "=./LOCAL to the command, or paths: {\"" + prefix +
                           "\": ./LOCAL} to the job file");
    }
    input.cloud = *written;
    input.path = *local;
    origin = "the local copy of " + *written + " by " + map_origin(*written, maps);
  } else {
    input.path = resolve_path(job_dir, *written);
  }
  if (auto ok = check_path(doc, *path_field, entry.key, origin, input.path, type); !ok) {
    return std::move(ok).error();
  }
  auto confined =
      confine_host_path(input.path, job_dir, grant, "input \"" + entry.key + "\"", doc.at(*path_field));
  if (!confined) return std::move(confined).error();
  return input;
}

}  // namespace

Result<std::string> read_mount(const YamlDoc& doc, const YamlField& field) {
  auto path = doc.string(field);
  if (!path) return path;
  if (!is_normal_absolute_path(*path) || *path == "/")
    return doc.error(field, "\"" + *path +
                                "\" is not an absolute path inside the container without \".\", \"..\" "
                                "or \"//\" (nor \"/\"); give where the platform mounts it, e.g. /data");
  for (const char* dir : {"/proc", "/sys", "/dev"})
    if (*path == dir || is_under(*path, dir))
      return doc.error(field, "\"" + *path + "\" lies in " + dir +
                                  ", which the container's own file system holds; give another place");
  return path;
}

bool is_cloud_path(const std::string& text) {
  if (text.rfind("azureml:", 0) == 0) return true;
  const auto scheme_end = text.find("://");
  if (scheme_end == std::string::npos || scheme_end == 0) return false;
  return std::all_of(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(scheme_end), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
  });
}

const PathMap* find_path_map(const std::string& written, const std::vector<PathMap>& maps) {
  const PathMap* best = nullptr;
  for (const PathMap& map : maps) {
    if (written.rfind(map.prefix, 0) != 0) continue;
    const std::string_view rest = std::string_view(written).substr(map.prefix.size());
    if (!rest.empty() && rest[0] != '/') continue;  // s3://b/data does not map s3://b/data2
    if (!best || map.prefix.size() > best->prefix.size()) best = &map;
  }
  return best;
}

std::optional<fs::path> map_cloud_path(const std::string& written, const std::vector<PathMap>& maps) {
  const PathMap* best = find_path_map(written, maps);
  if (!best) return std::nullopt;
  std::string rest = written.substr(best->prefix.size());
  while (!rest.empty() && rest[0] == '/') rest.erase(0, 1);
  return resolve_path(best->local, rest);
}

Result<PathMap> parse_path_map(const std::string& text, const fs::path& base_dir) {
  // A cloud prefix holds "://", so the "=" that ends it is the first after that; a cluster
  // folder (/datasets/imagenet, for a Slurm script) ends at the first "=".
  const auto scheme_end = text.find("://");
  const auto eq = text.find('=', scheme_end == std::string::npos ? 0 : scheme_end);
  std::string prefix = eq == std::string::npos ? text : text.substr(0, eq);
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  const bool folder = is_normal_absolute_path(prefix) && prefix != "/";
  if (eq == std::string::npos || (!is_cloud_path(prefix) && !folder) || eq + 1 == text.size())
    return Error::bad_input("--map " + text +
                            ": expected CLOUD_PATH=LOCAL_PATH, e.g. --map s3://bucket/train=./data-sample "
                            "(or /cluster/folder=./local for a Slurm script)");
  return PathMap{prefix, resolve_path(base_dir, text.substr(eq + 1)), {}};
}

Result<std::vector<PathMap>> read_paths(const YamlDoc& doc, const YamlField& section, const fs::path& job_dir,
                                        const HostGrant& grant) {
  auto entries = doc.fields(section, {});
  if (!entries) return std::move(entries).error();
  std::vector<PathMap> maps;
  for (const YamlField& entry : *entries) {
    if (!is_cloud_path(entry.key))
      return Error::bad_input(
          "paths: \"" + entry.key +
              "\" is not a cloud path; each key is where the platform has the data "
              "(s3://bucket/prefix, gs://bucket/path, azureml://datastores/..., pvc://claim)",
          doc.at(entry.key_node));
    auto local = doc.string(entry);
    if (!local) return std::move(local).error();
    if (local->empty() || is_cloud_path(*local))
      return doc.error(entry, "expected a local folder or file that stands for " + entry.key);
    std::string prefix = entry.key;
    while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
    auto confined = confine_host_path(resolve_path(job_dir, *local), job_dir, grant,
                                      "paths: \"" + entry.key + "\"", doc.at(entry));
    if (!confined) return std::move(confined).error();
    maps.push_back(PathMap{prefix, resolve_path(job_dir, *local), doc.at(entry)});
  }
  return maps;
}

bool is_literal(const YAML::Node& node) {
  if (!node.IsScalar() || node.Tag() != "?") return false;
  const std::string& text = node.Scalar();
  const std::string low = lower(text);
  if (low == "true" || low == "false") return true;
  double number = 0;
  const char* begin = text.data() + (!text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0);
  auto [end, ec] = std::from_chars(begin, text.data() + text.size(), number);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

bool is_system_folder(const fs::path& path) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  if (ec || real == real.root_path()) return true;
  for (const char* dir : {"/proc", "/sys", "/dev"})
    if (real == dir || is_under(real.string(), dir)) return true;
  return false;
}

fs::path resolve_path(const fs::path& job_dir, const std::string& written) {
  fs::path path = (job_dir / written).lexically_normal();
  if (!path.has_filename() && path.has_parent_path() && path != path.root_path()) {
    path = path.parent_path();
  }
  return path;
}

Result<std::vector<InputSpec>> read_inputs(const YamlDoc& doc, const YamlField& section,
                                           const fs::path& job_dir, const std::vector<PathMap>& maps,
                                           const HostGrant& grant) {
  auto entries = doc.fields(section, {});
  if (!entries) return std::move(entries).error();
  std::vector<InputSpec> inputs;
  std::vector<const YamlField*> seen;
  for (const YamlField& entry : *entries) {
    if (auto ok = check_name(doc, entry, "input", seen); !ok) return std::move(ok).error();
    auto input = read_input(doc, entry, job_dir, maps, grant);
    if (!input) return std::move(input).error();
    inputs.push_back(std::move(*input));
  }
  return inputs;
}

Result<std::vector<OutputSpec>> read_outputs(const YamlDoc& doc, const YamlField& section) {
  auto entries = doc.fields(section, {});
  if (!entries) return std::move(entries).error();
  std::vector<OutputSpec> outputs;
  std::vector<const YamlField*> seen;
  for (const YamlField& entry : *entries) {
    if (auto ok = check_name(doc, entry, "output", seen); !ok) return std::move(ok).error();
    if (!entry.value.IsNull() && !entry.value.IsMap()) {
      return doc.error(entry, "expected {} or a map of output settings, got " + describe(entry.value));
    }
    auto fields = doc.fields(entry, kOutputKeys);
    if (!fields) return std::move(fields).error();
    OutputSpec output{entry.key, doc.at(entry.key_node), {}};
    for (const YamlField& field : *fields) {
      Result<std::string> value = field.key == "type"    ? doc.one_of(field, kDataTypes)
                                  : field.key == "mode"  ? doc.one_of(field, kOutputModes)
                                  : field.key == "mount" ? read_mount(doc, field)
                                                         : doc.string(field);
      if (!value) return std::move(value).error();
      if (field.key == "mount") output.mount = *value;
    }
    outputs.push_back(std::move(output));
  }
  return outputs;
}

}  // namespace preflight::spec
