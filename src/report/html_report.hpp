// The report as one self-contained HTML page (issue 13): verdict, stage timeline, findings with
// their code, the estimate, clamps and notes, and the run's trace drawn as an SVG timeline.
// The page fetches nothing: no external URL, inline style and a small optional script, a CSP
// that forbids the rest. Everything from the job, the report and the trace is escaped.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report.hpp"

namespace preflight::report {

// Reads the lines first..last (1-based, clamped) of a file named by a finding's location;
// empty when it cannot.
using SourceLines =
    std::function<std::vector<std::string>(const std::filesystem::path& file, int first, int last)>;

// Lines of files below `code_dir` (a finding's location relative to it) and of `job_file`,
// read as untrusted: resolved inside code_dir (a symbolic link in the job's code can never show
// a host file), no absolute path or ".." but the job file, regular files only, at most
// kMaxSourceBytes read, lines cut at kMaxSourceLineChars characters.
SourceLines source_lines_below(const std::filesystem::path& code_dir, const std::filesystem::path& job_file);

inline constexpr std::size_t kMaxSourceBytes = 4u << 20;
inline constexpr std::size_t kMaxSourceLineChars = 400;

// The page. `trace` is a Chrome Trace Event JSON object ({"traceEvents": [...],
// "otherData": {...}}) or null; `lines` gives the code around each finding.
std::string to_html(const Report& report, const nlohmann::json& trace, const SourceLines& lines);

}  // namespace preflight::report
