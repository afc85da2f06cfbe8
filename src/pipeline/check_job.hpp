// `preflight check`: everything that needs no container (docs/static-checks.md). The job's code
// is read by the image's own Python and set against the image's modules, the platform's
// environment and mounts; the report has findings of phase "static" and no stages.
#pragma once

#include <vector>

#include "model/finding.hpp"
#include "pipeline/job_context.hpp"
#include "report/report.hpp"
#include "sandbox/runtime.hpp"
#include "util/error.hpp"

namespace preflight::pipeline {

// The static findings of a loaded job, the image's Python run by `runtime`; the dry run
// starts with them too.
Result<std::vector<model::Finding>> static_findings(const JobContext& context,
                                                    sandbox::ContainerRuntime& runtime);

// Predictions stay unverified: warnings, or errors with `strict` (docs/diagnosis.md "Predictions").
Result<report::Report> check_job(const JobChoices& choices, const image::ProgressSink& progress,
                                 sandbox::ContainerRuntime& runtime, bool strict = false);

}  // namespace preflight::pipeline
