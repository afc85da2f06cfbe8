// The clamps the harness reported (harness/events.hpp), as report.json lists them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/events.hpp"
#include "report/report.hpp"

namespace preflight::report {

// Values parsed back from the harness's JSON text; locations made relative to `code_dir`.
// A loop the harness ended is named with its place: "for loop at main.py:57".
std::vector<Clamp> clamps_of(const std::vector<harness::ClampEvent>& events, const std::string& code_dir);

// The report's note for each loop that trained and could not be shortened: "the while loop at
// train.py:40 ran in full: it is the last statement of its function". A loop the job was ended
// in (`endless`) did not run in full: endless_note speaks of it.
std::vector<std::string> loop_notes(const std::vector<harness::UncutLoop>& loops, const std::string& code_dir,
                                    const std::vector<harness::EndlessRun>& endless = {});

// The report's note for a job the harness ended because it went on repeating its steps: where
// it repeated itself, why its loop was not shortened (from `loops`), and either the count it
// ends at on the platform (the first of `counts`, a count it kept) or, with none, that it has
// no end of its own and the pace at which it trains until the platform stops it
// (`steps_per_hour`, when a step was measured).
std::string endless_note(const harness::EndlessRun& run, const std::vector<harness::UncutLoop>& loops,
                         const std::vector<harness::CountEvent>& counts, std::optional<double> steps_per_hour,
                         const std::string& code_dir);

}  // namespace preflight::report
