#include "report/batch_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/palette.hpp"

namespace preflight::report {
namespace {

using nlohmann::json;

// The report's first error-level finding, or nullptr.
const model::Finding* first_error(const Report& report) {
  for (const auto& finding : report.findings)
    if (finding.severity == model::Severity::Error) return &finding;
  return nullptr;
}

int count_verdict(std::span<const CollectedReport> reports, const std::string& verdict) {
  return static_cast<int>(std::count_if(
      reports.begin(), reports.end(), [&](const CollectedReport& r) { return r.report.verdict == verdict; }));
}

std::string seconds_text(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  const auto whole = static_cast<long long>(seconds);
  if (whole < 3600) return fmt::format("{}m {:02}s", whole / 60, whole % 60);
  return fmt::format("{}h {:02}m", whole / 3600, whole % 3600 / 60);
}

}  // namespace

std::string merged_verdict(std::span<const CollectedReport> reports) {
  if (count_verdict(reports, "fail") > 0) return "fail";
  if (count_verdict(reports, "error") > 0) return "error";
  return "pass";
}

Histogram histogram_of(std::span<const CollectedReport> reports) {
  Histogram histogram;
  for (const auto& collected : reports) {
    const model::Finding* error = first_error(collected.report);
    if (!error) continue;
    ++histogram.categories[error->category];
    ++histogram.stages[error->stage.empty() ? "none" : error->stage];
  }
  return histogram;
}

json batch_json(std::span<const CollectedReport> reports) {
  const Histogram histogram = histogram_of(reports);
  double duration = 0;
  json items = json::array();
  for (const auto& collected : reports) {
    duration += collected.report.duration_s;
    items.push_back({{"file", collected.file.string()}, {"report", collected.json}});
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

void print_batch_summary(std::span<const CollectedReport> reports, std::ostream& out, bool color) {
  const Palette p{color};
  std::size_t name_width = 0;
  for (const auto& collected : reports)
    name_width =
        std::max(name_width, collected.report.job_name.size() + 1 + collected.report.platform.size());
  double duration = 0;
  const CollectedReport* slowest = nullptr;
  for (const auto& collected : reports) {
    const Report& r = collected.report;
    duration += r.duration_s;
    if (!slowest || r.duration_s > slowest->report.duration_s) slowest = &collected;
    const std::string verdict = fmt::format("{:<5}", r.verdict);
    out << (r.verdict == "pass" ? p.green(verdict) : p.red(verdict)) << "  "
        << fmt::format("{:<{}}", r.job_name + "@" + r.platform, name_width) << "  "
        << fmt::format("{:>8}", seconds_text(r.duration_s)) << "  " << p.dim(collected.file.string());
    if (const model::Finding* error = first_error(r))
      out << "\n       " << p.bold(error->category) << model::where_text(*error);
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
      << fmt::format("{} jobs, {} passed, {} failed, {} not run (error); {} of runs in all", reports.size(),
                     count_verdict(reports, "pass"), count_verdict(reports, "fail"),
                     count_verdict(reports, "error"), seconds_text(duration));
  if (slowest)
    out << fmt::format(", the slowest {} ({})", slowest->report.job_name,
                       seconds_text(slowest->report.duration_s));
  out << "\n";
}

}  // namespace preflight::report
