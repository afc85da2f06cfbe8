// The clamps the harness reported (harness/events.hpp), as report.json lists them.
#pragma once

#include <string>
#include <vector>

#include "harness/events.hpp"
#include "report/report.hpp"

namespace preflight::report {

// Values parsed back from the harness's JSON text; locations made relative to `code_dir`.
// A loop the harness ended is named with its place: "for loop at main.py:57".
std::vector<Clamp> clamps_of(const std::vector<harness::ClampEvent>& events, const std::string& code_dir);

// The report's note for each loop that trained and could not be shortened: "the while loop at
// train.py:40 ran in full: it is the last statement of its function".
std::vector<std::string> loop_notes(const std::vector<harness::UncutLoop>& loops,
                                    const std::string& code_dir);

}  // namespace preflight::report
