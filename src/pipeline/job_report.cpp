#include "pipeline/job_report.hpp"

#include <algorithm>

namespace preflight::pipeline {
namespace fs = std::filesystem;

report::Report job_report(const JobContext& context, std::vector<model::Finding> findings) {
  report::Report report;
  report.job_name = context.job.name;
  report.job_file = fs::relative(context.job.file).string();
  report.job_path = context.job.file;
  report.code_dir = context.job.code_dir;
  report.platform = context.profile.name;
  report.image_ref = context.image_text;
  report.image_digest = context.image.digest;
  // What of the job file was not used (another platform's fields), each where it was written.
  for (const auto& note : context.job.notes) {
    SourceLocation where = note.where;
    if (where.known()) where.file = where.file.is_absolute() ? fs::relative(where.file) : where.file;
    report.notes.push_back(where.known() ? where.str() + ": " + note.message : note.message);
  }
  context.policies.checks.complete(findings);  // those the code built: the outputs', diagnosis's fallback
  report.findings = std::move(findings);
  report.verdict = report::verdict_of(report.findings);
  describe_categories(report, context.policies);
  return report;
}

void describe_categories(report::Report& report, const diagnosis::Policies& policies) {
  report.categories.clear();
  for (const auto& finding : report.findings) {
    const auto* category = policies.failures.find_category(finding.category);
    const auto described = [&](const model::Category& c) { return c.name == finding.category; };
    if (category && std::none_of(report.categories.begin(), report.categories.end(), described))
      report.categories.push_back(*category);
  }
}

}  // namespace preflight::pipeline
