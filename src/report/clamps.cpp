#include "report/clamps.hpp"

namespace preflight::report {

namespace {

nlohmann::json value_of(const std::string& text) {
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
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
    clamps.push_back(std::move(clamp));
  }
  return clamps;
}

}  // namespace preflight::report
