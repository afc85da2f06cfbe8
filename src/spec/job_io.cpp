#include "spec/job_io.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "util/text.hpp"

namespace preflight::spec {

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kInputKeys = {"path", "type", "mode", "description"};
const std::vector<std::string> kOutputKeys = {"type", "mode", "path", "name", "version", "description"};
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

Status check_path(const YamlDoc& doc, const YamlField& field, const std::string& name,
                  const std::string& written, const fs::path& resolved, const fs::path& job_dir,
                  const std::string& type) {
  std::error_code ec;
  const auto status = fs::status(resolved, ec);
  if (!fs::exists(status)) {
    return doc.error(field, "input \"" + name + "\": " + resolved.string() + " does not exist (path \"" +
                                written + "\", relative to " + job_dir.string() +
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

Result<InputSpec> read_input(const YamlDoc& doc, const YamlField& entry, const fs::path& job_dir) {
  InputSpec input{entry.key, {}, doc.at(entry.key_node), std::nullopt, doc.at(entry)};
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
  if (written->rfind("azureml:", 0) == 0 || written->find("://") != std::string::npos) {
    return doc.error(*path_field, "\"" + *written +
                                      "\" is not a local path; Preflight needs a local copy or "
                                      "sample of the data: set path: to a folder such as ./data");
  }
  input.path = resolve_path(job_dir, *written);
  if (auto ok = check_path(doc, *path_field, entry.key, *written, input.path, job_dir, type); !ok) {
    return std::move(ok).error();
  }
  return input;
}

}  // namespace

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
                                           const fs::path& job_dir) {
  auto entries = doc.fields(section, {});
  if (!entries) return std::move(entries).error();
  std::vector<InputSpec> inputs;
  std::vector<const YamlField*> seen;
  for (const YamlField& entry : *entries) {
    if (auto ok = check_name(doc, entry, "input", seen); !ok) return std::move(ok).error();
    auto input = read_input(doc, entry, job_dir);
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
    for (const YamlField& field : *fields) {
      Result<std::string> value = field.key == "type"   ? doc.one_of(field, kDataTypes)
                                  : field.key == "mode" ? doc.one_of(field, kOutputModes)
                                                        : doc.string(field);
      if (!value) return std::move(value).error();
    }
    outputs.push_back(OutputSpec{entry.key, doc.at(entry.key_node)});
  }
  return outputs;
}

}  // namespace preflight::spec
