// report.json read back (docs/formats.md "report.json"), for the commands that merge the
// reports other runs wrote: `preflight batch` (its runs, one process each) and `preflight
// collect` (the tasks of a Slurm array or a Kubernetes Job, on other machines). pipeline/
// collect.hpp finds and reads the files, with a bound and never through a link; what they hold
// is untrusted like everything a run leaves: a field missing or of another type reads as empty
// (as report.json's readers are told to expect of a newer minor version), and only what makes
// it a report is required: its schema, a verdict the contract knows, and findings whose
// severity, phase and retry it knows. `estimate` is not read back: a merged report keeps each
// report's JSON as it was.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "report/report.hpp"
#include "util/error.hpp"

namespace preflight::report {

// The most a report.json may weigh: a report with every finding the rules can give, each with a
// long message, is far below it.
inline constexpr std::size_t kMaxReportBytes = std::size_t{64} << 20;

// report.json's text as JSON; `origin` names the file in errors. Text that is not JSON, or that
// nests arrays and objects more than kMaxNesting deep (util/input_bounds.hpp), is bad input.
Result<nlohmann::json> parse_report_json(const std::string& text, const std::string& origin);

// Whether the JSON says it is a Preflight report, of any version: its "schema" begins with
// "preflight.report/". What collect skips in a folder when not.
bool is_report(const nlohmann::json& root);

// A report from report.json's JSON; `origin` names it in errors ("runs/a/report.json"). A JSON
// that is not a v1 report is bad input naming the origin and the field.
Result<Report> report_from_json(const nlohmann::json& root, const std::string& origin);

}  // namespace preflight::report
