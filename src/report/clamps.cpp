#include "report/clamps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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

// 12,400 (two significant figures above 100: a pace, not a count).
std::string grouped_count(double value) {
  const double rounded = value >= 100 ? std::round(value / std::pow(10, std::floor(std::log10(value)) - 1)) *
                                            std::pow(10, std::floor(std::log10(value)) - 1)
                                      : std::round(value);
  const std::string digits = fmt::format("{:.0f}", rounded);
  std::string grouped;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
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

std::vector<std::string> loop_notes(const std::vector<harness::UncutLoop>& loops, const std::string& code_dir,
                                    const std::vector<harness::EndlessRun>& endless) {
  std::vector<std::string> notes;
  for (const harness::UncutLoop& loop : loops) {
    const std::string at = place(harness::location_in_code(loop.where, code_dir));
    if (!at.empty() && std::any_of(endless.begin(), endless.end(), [&](const harness::EndlessRun& run) {
          return place(harness::location_in_code(run.loop, code_dir)) == at;
        }))
      continue;
    notes.push_back(fmt::format("the {}{} was not shortened and ran in full: {}", loop.what,
                                at.empty() ? "" : " at " + at, loop.why));
  }
  return notes;
}

std::string endless_note(const harness::EndlessRun& run, const std::vector<harness::UncutLoop>& loops,
                         const std::vector<harness::CountEvent>& counts, std::optional<double> steps_per_hour,
                         const std::string& code_dir) {
  const std::string loop_at = place(harness::location_in_code(run.loop, code_dir));
  std::string where = "a library's loop";
  if (!loop_at.empty()) {
    where = fmt::format("the {} at {}", run.loop_what.empty() ? "loop" : run.loop_what, loop_at);
    for (const harness::UncutLoop& loop : loops)
      if (place(harness::location_in_code(loop.where, code_dir)) == loop_at) {
        where += fmt::format(", which the harness could not shorten: {}", loop.why);
        break;
      }
  }
  if (!counts.empty()) {
    const harness::CountEvent& count = counts.front();
    const std::string count_at = place(harness::location_in_code(count.where, code_dir));
    return fmt::format(
        "the dry run ended the job after its sampled steps: it went on training in {} ({} training steps, "
        "the "
        "last {} reaching no new line of its code and no new stage); on the platform it runs to its own end: "
        "{} {} ({}{})",
        where, run.after, run.quiet, fmt::format("{:.0f}", count.value), count.kind, count.what,
        count_at.empty() ? "" : " at " + count_at);
  }
  std::string pace = "the platform's time limit";
  if (steps_per_hour && *steps_per_hour > 0)
    pace += fmt::format(", at about {} training steps an hour", grouped_count(*steps_per_hour));
  return fmt::format(
      "the job has no end of its own: after its sampled steps it went on training in {} ({} training "
      "steps, the last {} reaching no new line of its code and no new stage), so the dry run ended it there "
      "and judged what it had run; on the platform it trains until {}",
      where, run.after, run.quiet, pace);
}

}  // namespace preflight::report
