// What the job left behind, read after the run: files written outside its output folders
// (in the overlay's upper layer — the platform discards them) and output folders left empty
// by a job that trained. Both are warnings of rules of policies/rules/checks.yaml (category
// "Output Lost"), completed by the report (pipeline::job_report).
#pragma once

#include <filesystem>
#include <vector>

#include "harness/events.hpp"
#include "model/finding.hpp"
#include "plan/run_plan.hpp"

namespace preflight::pipeline {

// `upper`: the run's overlay upper layer. The harness's events tell whether the job trained and
// where its torch.save calls wrote: a finding about a saved file points at its torch.save line.
std::vector<model::Finding> output_findings(const plan::RunPlan& plan, const std::filesystem::path& upper,
                                            const harness::HarnessEvents& events);

}  // namespace preflight::pipeline
