#include "pipeline/run_files.hpp"

#include <fmt/format.h>

#include "report/html_report.hpp"

namespace preflight::pipeline {

void attach_trace(report::Report& report, RunTrace trace) {
  if (trace.left_out > 0)
    report.notes.push_back(
        fmt::format("the trace left out {} events to stay within its bounds (docs/harness.md \"Trace\"): "
                    "its timeline shows the earliest",
                    trace.left_out));
  report.trace = std::move(trace.json);
  report.trace_gzip = std::move(trace.gzip);
}

Status write_html(const report::Report& report, const std::filesystem::path& file) {
  const auto lines = report::source_lines_below(report.code_dir, report.job_path);
  return report::write_report_file(file, report::to_html(report, report.trace, lines));
}

Status write_trace(const report::Report& report, const std::filesystem::path& file) {
  return report::write_report_file(file, report.trace_gzip);
}

Status write_run_files(const report::Report& report) {
  if (auto written = report::write_json(report, report.run_dir / kRunReportJson); !written) return written;
  if (auto written = write_trace(report, report.run_dir / kRunTrace); !written) return written;
  return write_html(report, report.run_dir / kRunReportHtml);
}

}  // namespace preflight::pipeline
