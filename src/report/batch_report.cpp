#include "report/batch_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/palette.hpp"
#include "util/text.hpp"

namespace preflight::report {
namespace {

using nlohmann::json;

// The report's first error-level finding, or nullptr.
const model::Finding* first_error(const Report& report) {
  for (const auto& finding : report.findings)
    if (finding.severity == model::Severity::Error) return &finding;
  return nullptr;
}

int count_verdict(std::span<const Report> reports, const std::string& verdict) {
  return static_cast<int>(
      std::count_if(reports.begin(), reports.end(), [&](const Report& r) { return r.verdict == verdict; }));
}

}  // namespace

void Batch::add(std::filesystem::path file, Report report, nlohmann::json written) {
  files.push_back(std::move(file));
  reports.push_back(std::move(report));
  json.push_back(std::move(written));
}

std::string merged_verdict(std::span<const Report> reports) {
  if (count_verdict(reports, "fail") > 0) return "fail";
  if (count_verdict(reports, "error") > 0) return "error";
  return "pass";
}

int merged_exit_status(std::span<const Report> reports) {
  int status = 0;
  for (const Report& report : reports) {
    const int one = exit_status_of(report);
    // The order of precedence: 1, then 2, then 3.
    if (one != 0 && (status == 0 || one < status)) status = one;
  }
  return status;
}

Histogram histogram_of(std::span<const Report> reports) {
  Histogram histogram;
  for (const Report& report : reports) {
    const model::Finding* error = first_error(report);
    if (!error) continue;
    ++histogram.categories[error->category];
    ++histogram.stages[error->stage.empty() ? "none" : error->stage];
  }
  return histogram;
}

json batch_json(const Batch& batch) {
  const std::span<const Report> reports = batch.reports;
  const Histogram histogram = histogram_of(reports);
  double duration = 0;
  json items = json::array();
  for (std::size_t i = 0; i < reports.size(); ++i) {
    duration += reports[i].duration_s;
    items.push_back({{"file", batch.files[i].string()}, {"report", batch.json[i]}});
  }
  return {{"schema", "preflight.batch/v1"},
          {"verdict", merged_verdict(reports)},
          {"jobs", reports.size()},
          {"counts",
           {{"pass", count_verdict(reports, "pass")},
            {"fail", count_verdict(reports, "fail")},
            {"error", count_verdict(reports, "error")}}},
          {"categories", histogram.categories},
          {"stages", histogram.stages},
          {"duration_s", duration},
          {"reports", items}};
}

void print_batch_summary(const Batch& batch, std::ostream& out, bool color) {
  const Palette p{color};
  const std::span<const Report> reports = batch.reports;
  // A job Preflight could not read has no name yet: its file stands for it.
  const auto name_of = [](const Report& r) {
    return (r.job_name.empty() ? r.job_file : r.job_name) + (r.platform.empty() ? "" : "@" + r.platform);
  };
  std::size_t name_width = 0;
  for (const Report& r : reports) name_width = std::max(name_width, name_of(r).size());
  double duration = 0;
  const Report* slowest = nullptr;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const Report& r = reports[i];
    duration += r.duration_s;
    if (!slowest || r.duration_s > slowest->duration_s) slowest = &r;
    const std::string verdict = fmt::format("{:<5}", r.verdict);
    out << (r.verdict == "pass" ? p.green(verdict) : p.red(verdict)) << "  "
        << fmt::format("{:<{}}", name_of(r), name_width) << "  "
        << fmt::format("{:>8}", human_duration(r.duration_s)) << "  " << p.dim(batch.files[i].string());
    if (const model::Finding* error = first_error(r))
      out << "\n       " << p.bold(error->category) << model::where_text(*error);
    else if (r.error)
      out << "\n       " << r.error->message;
    out << "\n";
  }
  const Histogram histogram = histogram_of(reports);
  const auto print_counts = [&](const char* title, const std::map<std::string, int>& counts) {
    if (counts.empty()) return;
    std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    out << p.bold(title) << ":";
    for (const auto& [name, count] : sorted) out << fmt::format("  {} {}", name, count);
    out << "\n";
  };
  print_counts("failures by category", histogram.categories);
  print_counts("failures by stage", histogram.stages);
  out << p.bold(merged_verdict(reports)) << ": "
      << fmt::format("{} job{}, {} passed, {} failed, {} not run (error); {} of runs in all", reports.size(),
                     reports.size() == 1 ? "" : "s", count_verdict(reports, "pass"),
                     count_verdict(reports, "fail"), count_verdict(reports, "error"),
                     human_duration(duration));
  if (slowest)
    out << fmt::format(", the slowest {} ({})", name_of(*slowest), human_duration(slowest->duration_s));
  out << "\n";
}

}  // namespace preflight::report
