#include "report/clamps.hpp"

#include <fmt/format.h>

#include "util/json_fields.hpp"

namespace preflight::report {

namespace {

// "main.py:57", or "" when the frame is not in the job's code.
std::string place(const SourceLocation& location) {
  if (!location.known()) return "";
  return location.line > 0 ? fmt::format("{}:{}", location.file.string(), location.line)
                           : location.file.string();
}

nlohmann::json value_of(const std::string& text) {
  nlohmann::json value = json_fields::parse_bounded(text);
  return value.is_discarded() ? nlohmann::json(text) : value;
}

}  // namespace

std::vector<Clamp> clamps_of(const std::vector<harness::ClampEvent>& events, const std::string& code_dir) {
  std::vector<Clamp> clamps;
  for (const harness::ClampEvent& event : events) {
    Clamp clamp;
    clamp.what = event.what;
    clamp.kind = event.kind;
    clamp.original = event.original ? value_of(*event.original) : nlohmann::json(nullptr);
    clamp.value = value_of(event.value);
    clamp.location = harness::location_in_code(event.where, code_dir);
    if (event.cut && !place(clamp.location).empty()) clamp.what += " at " + place(clamp.location);
    clamps.push_back(std::move(clamp));
  }
  return clamps;
}

std::vector<std::string> loop_notes(const std::vector<harness::UncutLoop>& loops,
                                    const std::string& code_dir) {
  std::vector<std::string> notes;
  for (const harness::UncutLoop& loop : loops) {
    const std::string at = place(harness::location_in_code(loop.where, code_dir));
    notes.push_back(fmt::format("the {}{} was not shortened and ran in full: {}", loop.what,
                                at.empty() ? "" : " at " + at, loop.why));
  }
  return notes;
}

}  // namespace preflight::report
