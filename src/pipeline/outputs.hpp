// What the job left behind, read after the run: files written outside its output folders
// (in the overlay's upper layer — the platform discards them) and output folders left empty
// by a job that trained. Both are warnings of category "Output Lost".
#pragma once

#include <filesystem>
#include <vector>

#include "plan/run_plan.hpp"
#include "report/finding.hpp"

namespace preflight::pipeline {

// `upper`: the run's overlay upper layer; `trained`: the job reached the train stage.
std::vector<report::Finding> output_findings(const plan::RunPlan& plan, const std::filesystem::path& upper,
                                             bool trained);

}  // namespace preflight::pipeline
