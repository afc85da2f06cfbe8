// The outcome of a run in the formats CI servers read (docs/formats.md, docs/ci.md): a JUnit
// XML test report, a SARIF 2.1.0 log for code scanning, and GitHub Actions workflow commands
// that annotate the files. Each is a pure function of the Report.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "report/report.hpp"

namespace preflight::report {

// JUnit XML: one testsuite (job@platform), a testcase per stage and per finding.
std::string to_junit(const Report& report);

// What a SARIF log says about the tool that wrote it.
struct SarifTool {
  std::string name;
  std::string version;
  std::string information_uri;  // empty: left out
};

// A SARIF 2.1.0 log: a rule per category that occurs, described by the report's categories, a
// result per finding. Files are relative to the job's code folder, or to
// `workspace` (GITHUB_WORKSPACE; empty: none) when the job lies in it, as code scanning wants.
nlohmann::json to_sarif(const Report& report, const SarifTool& tool, const std::filesystem::path& workspace);

// One `::error file=F,line=L,title=Category::message` workflow command per finding, files
// relative to `workspace` (GITHUB_WORKSPACE) when they lie in it.
void print_annotations(const Report& report, const std::filesystem::path& workspace, std::ostream& out);

}  // namespace preflight::report
