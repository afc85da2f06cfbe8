// The outcome of a run in the formats CI servers read (docs/formats.md, docs/ci.md): a JUnit
// XML test report, a SARIF 2.1.0 log for code scanning, and GitHub Actions workflow commands
// that annotate the files. Each is a pure function of the Report.
#pragma once

#include <filesystem>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "report/report.hpp"

namespace preflight::report {

// JUnit XML: a testsuite per report (job@platform, numbered when two reports share it), a
// testcase per stage and per finding; the totals of all of them on <testsuites>.
std::string to_junit(std::span<const Report> reports);
inline std::string to_junit(const Report& report) { return to_junit(std::span<const Report>(&report, 1)); }

// What a SARIF log says about the tool that wrote it.
struct SarifTool {
  std::string name;
  std::string version;
  std::string information_uri;  // empty: left out
};

// A SARIF 2.1.0 log with one run for all the reports: a rule per category that occurs,
// described by the reports' categories, a result per finding (naming its job when there are
// several). Files are relative to each job's code folder, or to `workspace` (GITHUB_WORKSPACE;
// empty: none) when every job lies in it, as code scanning wants.
nlohmann::json to_sarif(std::span<const Report> reports, const SarifTool& tool,
                        const std::filesystem::path& workspace);
inline nlohmann::json to_sarif(const Report& report, const SarifTool& tool,
                               const std::filesystem::path& workspace) {
  return to_sarif(std::span<const Report>(&report, 1), tool, workspace);
}

// One `::error file=F,line=L,title=Category::message` workflow command per finding, files
// relative to `workspace` (GITHUB_WORKSPACE) when they lie in it.
void print_annotations(const Report& report, const std::filesystem::path& workspace, std::ostream& out);

}  // namespace preflight::report
