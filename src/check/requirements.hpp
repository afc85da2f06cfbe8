// The job's requirements files (requirements.txt) against the image's distributions: a pin
// the image contradicts (torch==2.1.0 where the image has 1.13) is the job asking for software
// the platform's image does not have.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "check/module_index.hpp"
#include "check/versions.hpp"
#include "report/finding.hpp"

namespace preflight::check {

// requirements*.txt at the top of the code folder, each pin checked against `index`.
std::vector<report::Finding> requirement_findings(const std::filesystem::path& code_dir,
                                                  const ModuleIndex& index);

}  // namespace preflight::check
