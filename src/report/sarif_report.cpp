#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <span>
#include <vector>

#include "report/ci_reports.hpp"
#include "util/text.hpp"

namespace preflight::report {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A path as a URI path: every byte but the unreserved characters of RFC 3986 and '/' is
// percent-encoded, so spaces and non-ASCII names stay valid URIs.
std::string uri_path(const std::string& path) {
  std::string out;
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", byte);
    }
  }
  return out;
}

std::string file_uri(const fs::path& absolute) { return "file://" + uri_path(absolute.generic_string()); }

// "GPU Out of Memory" → "GPUOutOfMemory": SARIF's friendly rule name is one Pascal-case word.
std::string pascal_name(const std::string& category) {
  std::string out;
  bool word_start = true;
  for (const char c : category) {
    const auto byte = static_cast<unsigned char>(c);
    if (!std::isalnum(byte)) {
      word_start = true;
      continue;
    }
    out += word_start ? static_cast<char>(std::toupper(byte)) : c;
    word_start = false;
  }
  return out;
}

// The first sentence of a category's description.
std::string first_sentence(const std::string& text) {
  const auto end = text.find(". ");
  return end == std::string::npos ? text : text.substr(0, end + 1);
}

json rule_of(const std::string& category, const std::vector<model::Category>& categories) {
  json rule = {{"id", model::category_id(category)},
               {"name", pascal_name(category)},
               {"shortDescription", {{"text", category + "."}}},
               {"properties", {{"category", category}}}};
  for (const auto& known : categories) {
    if (known.name != category) continue;
    rule["shortDescription"]["text"] = first_sentence(known.description);
    rule["fullDescription"] = {{"text", known.description}};
    rule["help"] = {{"text", "Usual fix: " + known.fix}};
    rule["properties"]["tags"] = json::array({known.dimension});
  }
  return rule;
}

const char* sarif_level(model::Severity severity) {
  switch (severity) {
    case model::Severity::Error:
      return "error";
    case model::Severity::Warning:
      return "warning";
    case model::Severity::Info:
      return "note";
  }
  return "error";
}

// Where the relative URIs point: the repository when every job lies in `workspace` (code
// scanning reads paths relative to it, whatever the base id says), else each job's code folder:
// CODE, then CODE2, CODE3... for the other folders of a merged report.
struct UriBase {
  std::string id;
  fs::path dir;
  std::string description;
};

std::vector<UriBase> uri_bases(std::span<const Report> reports, const fs::path& workspace) {
  const bool in_workspace =
      !workspace.empty() && std::all_of(reports.begin(), reports.end(), [&](const Report& report) {
        return relative_within(report.code_dir, workspace).has_value();
      });
  std::vector<UriBase> bases;
  if (in_workspace) {
    bases.push_back({"SRCROOT", workspace, "the repository (GITHUB_WORKSPACE)"});
    return bases;
  }
  for (const Report& report : reports) {
    const bool known = std::any_of(bases.begin(), bases.end(),
                                   [&](const UriBase& base) { return base.dir == report.code_dir; });
    if (known) continue;
    const std::string id = bases.empty() ? "CODE" : fmt::format("CODE{}", bases.size() + 1);
    bases.push_back({id, report.code_dir, bases.empty() ? "the job's code folder" : "a job's code folder"});
  }
  return bases;
}

const UriBase& base_of(const Report& report, const std::vector<UriBase>& bases) {
  for (const UriBase& base : bases)
    if (base.dir == report.code_dir) return base;
  return bases.front();  // SRCROOT: every job lies in it
}

// A base URI names a folder: it ends with '/'.
std::string folder_uri(const fs::path& dir) {
  std::string uri = file_uri(dir.lexically_normal());
  return uri.back() == '/' ? uri : uri + "/";
}

json location_of(const Report& report, const model::Finding& finding, const UriBase& base) {
  const SourceLocation place = place_of(report, finding);
  json artifact = {{"uri", file_uri(place.file.lexically_normal())}};
  if (auto relative = relative_within(place.file, base.dir))
    artifact = {{"uri", uri_path(relative->generic_string())}, {"uriBaseId", base.id}};
  json physical = {{"artifactLocation", artifact}};
  if (place.line > 0) {
    physical["region"] = {{"startLine", place.line}};
    if (place.column > 0) physical["region"]["startColumn"] = place.column;
  }
  return json::array({{{"physicalLocation", physical}}});
}

}  // namespace

nlohmann::json to_sarif(std::span<const Report> reports, const SarifTool& tool,
                        const std::filesystem::path& workspace) {
  json rules = json::array();
  std::vector<std::string> rule_categories;
  json results = json::array();
  const std::vector<UriBase> bases = uri_bases(reports, workspace);
  for (const Report& report : reports) {
    const UriBase& base = base_of(report, bases);
    for (const auto& f : report.findings) {
      auto known = std::find(rule_categories.begin(), rule_categories.end(), f.category);
      if (known == rule_categories.end()) {
        rules.push_back(rule_of(f.category, report.categories));
        known = rule_categories.insert(rule_categories.end(), f.category);
      }
      json properties = {{"rule", f.rule},
                         {"dimension", f.dimension},
                         {"rootCause", f.root_cause},
                         {"phase", to_string(f.phase)},
                         {"retry", to_string(f.retry)}};
      if (!f.stage.empty()) properties["stage"] = f.stage;
      if (const char* prediction = to_string(f.prediction)) properties["prediction"] = prediction;
      if (reports.size() > 1) properties["job"] = report.job_name + "@" + report.platform;
      results.push_back({{"ruleId", model::category_id(f.category)},
                         {"ruleIndex", known - rule_categories.begin()},
                         {"level", sarif_level(f.severity)},
                         {"message", {{"text", model::message_and_hint(f)}}},
                         {"locations", location_of(report, f, base)},
                         {"properties", properties}});
    }
  }
  json driver = {
      {"name", tool.name}, {"version", tool.version}, {"semanticVersion", tool.version}, {"rules", rules}};
  if (!tool.information_uri.empty()) driver["informationUri"] = tool.information_uri;
  json base_ids = json::object();
  for (const UriBase& base : bases)
    base_ids[base.id] = {{"uri", folder_uri(base.dir)}, {"description", {{"text", base.description}}}};
  // One run for all the jobs: code scanning takes one run per tool and category in a log.
  const std::string category = reports.size() == 1
                                   ? fmt::format("preflight/{}@{}/", reports[0].job_name, reports[0].platform)
                                   : std::string("preflight/batch/");
  json run = {{"tool", {{"driver", driver}}},
              {"automationDetails", {{"id", category}}},
              {"originalUriBaseIds", base_ids},
              {"invocations", json::array({{{"executionSuccessful", true}}})},
              {"results", results}};
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", json::array({run})}};
}

}  // namespace preflight::report
