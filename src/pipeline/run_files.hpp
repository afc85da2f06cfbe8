// What a dry run leaves in its run folder for a later look (docs/formats.md "Run folder"):
// report.json, report.html and trace.json.gz, and the copies --html and --trace ask for.
#pragma once

#include <filesystem>

#include "pipeline/run_trace.hpp"
#include "report/report.hpp"
#include "util/error.hpp"

namespace preflight::pipeline {

inline constexpr const char* kRunReportJson = "report.json";
inline constexpr const char* kRunReportHtml = "report.html";
inline constexpr const char* kRunTrace = "trace.json.gz";

// Puts the trace into the report, with a note when it left events out.
void attach_trace(report::Report& report, RunTrace trace);

// The report page (report/html_report.hpp) with the code around each finding, to `file`.
Status write_html(const report::Report& report, const std::filesystem::path& file);
// The report's trace, compressed, to `file`.
Status write_trace(const report::Report& report, const std::filesystem::path& file);
// All three into the report's run folder.
Status write_run_files(const report::Report& report);

}  // namespace preflight::pipeline
