// The clamps the harness reported (harness/events.hpp), as report.json lists them.
#pragma once

#include <string>
#include <vector>

#include "harness/events.hpp"
#include "report/report.hpp"

namespace preflight::report {

// Values parsed back from the harness's JSON text; locations made relative to `code_dir`.
std::vector<Clamp> clamps_of(const std::vector<harness::ClampEvent>& events, const std::string& code_dir);

}  // namespace preflight::report
