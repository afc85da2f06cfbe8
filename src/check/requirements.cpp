#include "check/requirements.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <sstream>

#include "check/image_diff.hpp"
#include "check/static_checks.hpp"
#include "util/text.hpp"

namespace preflight::check {
namespace fs = std::filesystem;

namespace {

bool clause_holds(const std::string& version, const std::string& clause) {
  static const re2::RE2 parts(R"(^\s*(===|==|!=|<=|>=|<|>|~=)\s*([^\s]+)\s*$)");
  std::string op, wanted;
  if (!re2::RE2::FullMatch(clause, parts, &op, &wanted)) return true;
  if (op == "===") return version == wanted;
  if (wanted.size() > 2 && wanted.compare(wanted.size() - 2, 2, ".*") == 0) {
    // ==1.13.* : the release starts with 1.13.
    const std::string prefix = wanted.substr(0, wanted.size() - 2);
    const std::string release = version.substr(0, version.find_first_not_of("0123456789."));
    const bool same = release == prefix || release.rfind(prefix + ".", 0) == 0;
    return op == "==" ? same : op == "!=" ? !same : true;
  }
  const int order = compare_versions(version, wanted);
  if (op == "==") return order == 0;
  if (op == "!=") return order != 0;
  if (op == "<=") return order <= 0;
  if (op == ">=") return order >= 0;
  if (op == "<") return order < 0;
  if (op == ">") return order > 0;
  // ~=1.4.2 means >=1.4.2 and ==1.4.*
  const auto last_dot = wanted.rfind('.');
  if (order < 0 || last_dot == std::string::npos) return order >= 0;
  return clause_holds(version, "==" + wanted.substr(0, last_dot) + ".*");
}

}  // namespace

bool satisfies(const std::string& version, const std::string& specifier) {
  std::istringstream clauses(specifier);
  std::string clause;
  while (std::getline(clauses, clause, ','))
    if (!trim(clause).empty() && !clause_holds(version, clause)) return false;
  return true;
}

std::vector<report::Finding> requirement_findings(const fs::path& code_dir, const ModuleIndex& index) {
  static const re2::RE2 requirement(
      R"(^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([<>=!~][^;#]*?)\s*(?:[;#].*)?$)");
  std::vector<report::Finding> findings;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(code_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("requirements", 0) == 0 && entry.path().extension() == ".txt")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::istringstream lines(read_file(file).value_or(""));
    std::string line, name, specifier;
    for (int number = 1; std::getline(lines, line); ++number) {
      if (!re2::RE2::FullMatch(line, requirement, &name, &specifier)) continue;
      const Distribution* dist = index.distribution(name);
      if (!dist || satisfies(dist->version, specifier)) continue;
      auto f = static_finding("requirement-not-in-image", "Library Not Found", "Execution Environment",
                              "Environment Difference", report::Severity::Warning,
                              file.lexically_relative(code_dir).string(), number);
      f.message = fmt::format("{} asks for {}{}, and the image has {} {}", f.location.file.string(), name,
                              trim(specifier), dist->name, dist->version);
      f.hint = fmt::format(
          "The job runs with {} {} unless it installs its own: check that the code works with it, or choose "
          "an "
          "image with the version it needs (preflight image inspect lists them).",
          dist->name, dist->version);
      findings.push_back(std::move(f));
    }
  }
  return findings;
}

}  // namespace preflight::check
