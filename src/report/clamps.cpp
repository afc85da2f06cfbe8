#include "report/clamps.hpp"

namespace preflight::report {

namespace {

nlohmann::json value_of(const std::string& text) {
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_discarded() ? nlohmann::json(text) : value;
}

SourceLocation location_of(const std::optional<harness::Frame>& where, const std::string& code_dir) {
  SourceLocation location;
  if (!where || where->file.empty()) return location;
  std::string file = where->file;
  const std::string prefix = code_dir.empty() || code_dir.back() == '/' ? code_dir : code_dir + "/";
  if (!prefix.empty() && file.rfind(prefix, 0) == 0) file.erase(0, prefix.size());
  location.file = file;
  location.line = where->line;
  return location;
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
    clamp.location = location_of(event.where, code_dir);
    clamps.push_back(std::move(clamp));
  }
  return clamps;
}

}  // namespace preflight::report
