#include "check/requirements.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <sstream>

#include "check/static_checks.hpp"
#include "util/text.hpp"

namespace preflight::check {
namespace fs = std::filesystem;

namespace {}  // namespace

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
