// What every command's report says of its job, whichever command wrote it.
#pragma once

#include <vector>

#include "model/finding.hpp"
#include "pipeline/job_context.hpp"
#include "report/report.hpp"

namespace preflight::pipeline {

// The report of the job in `context` with `findings`: the job, platform and image, the verdict
// of the findings and the rules file's description of each of their categories. A finding
// without a category yet is completed from policies/rules/checks.yaml. Stages, clamps,
// notes, the estimate and the duration are the caller's.
report::Report job_report(const JobContext& context, std::vector<model::Finding> findings);

// Sets `report.categories` to the rules file's description of each category among its findings
// (what SARIF's rules carry), for a report built here or read back from report.json.
void describe_categories(report::Report& report, const diagnosis::Policies& policies);

}  // namespace preflight::pipeline
