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
#include <vector>

#include "report/report.hpp"

namespace preflight::report {

// Many runs' reports: reports[i] was read from files[i], and json[i] is what its run wrote,
// estimate included. The reports lie side by side so that the formats of many (JUnit, SARIF)
// take them as they are.
struct Batch {
  std::vector<Report> reports;  // each with its categories described by this Preflight's rules
  std::vector<std::filesystem::path> files;
  std::vector<nlohmann::json> json;

  void add(std::filesystem::path file, Report report, nlohmann::json written);
};

// The verdict of many: "fail" when a job is predicted to fail, else "error" when Preflight
// could not run one, else "pass".
std::string merged_verdict(std::span<const Report> reports);
// Their exit status: 1 when a job is predicted to fail, else 2 when a job's input was bad (its
// file, profile or image), else 3 when a job could not run, else 0.
int merged_exit_status(std::span<const Report> reports);

// How many reports have their first error in each category, and in each stage ("none" when it
// names none); a report without an error counts in neither.
struct Histogram {
  std::map<std::string, int> categories;
  std::map<std::string, int> stages;
};
Histogram histogram_of(std::span<const Report> reports);

// preflight.batch/v1: the verdict, the counts by verdict, the histogram, the summed duration,
// and each report as its run wrote it with the file it was read from.
nlohmann::json batch_json(const Batch& batch);

// A line per report (verdict, job@platform, its seconds, its file, its first error or why it
// could not run), the histograms, and the totals with the slowest job.
void print_batch_summary(const Batch& batch, std::ostream& out, bool color);

}  // namespace preflight::report
