// Many runs' reports as one: what `preflight batch` and `preflight collect` print and write
// (docs/cli.md, docs/formats.md "preflight.batch/v1"). Each is a pure function of the reports,
// which pipeline/collect.hpp reads back from the report.json files the runs wrote.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <string>

#include "report/report.hpp"

namespace preflight::report {

struct CollectedReport {
  std::filesystem::path file;  // where it was read
  Report report;               // its categories described by this Preflight's rules
  nlohmann::json json;         // as its run wrote it, estimate included
};

// The verdict of many: "fail" when a job is predicted to fail, else "error" when Preflight
// could not run one, else "pass"; its exit status is exit_status_of's.
std::string merged_verdict(std::span<const CollectedReport> reports);

// How many reports have their first error in each category, and in each stage ("none" when it
// names none); a report without an error counts in neither.
struct Histogram {
  std::map<std::string, int> categories;
  std::map<std::string, int> stages;
};
Histogram histogram_of(std::span<const CollectedReport> reports);

// preflight.batch/v1: the verdict, the counts by verdict, the histogram, the summed duration,
// and each report as its run wrote it with the file it was read from.
nlohmann::json batch_json(std::span<const CollectedReport> reports);

// A line per report (verdict, job@platform, its file, its seconds, its first error), the
// histograms, and the totals with the slowest job.
void print_batch_summary(std::span<const CollectedReport> reports, std::ostream& out, bool color);

}  // namespace preflight::report
