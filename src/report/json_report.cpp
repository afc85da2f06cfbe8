#include <fstream>

#include "report/report.hpp"

namespace preflight::report {

std::string verdict_of(const std::vector<Finding>& findings) {
  for (const auto& finding : findings)
    if (finding.severity == Severity::Error) return "fail";
  return "pass";
}

int exit_status_of(const std::string& verdict) {
  if (verdict == "pass") return 0;
  if (verdict == "fail") return 1;
  return 3;
}

nlohmann::json to_json(const Report& report) {
  using nlohmann::json;
  json stages = json::array();
  for (const auto& stage : report.stages)
    stages.push_back({{"name", stage.name}, {"status", stage.status}, {"seconds", stage.seconds}});
  json findings = json::array();
  for (const auto& f : report.findings) {
    json location = json::object();
    if (f.location.known()) {
      location["file"] = f.location.file.string();
      if (f.location.line > 0) location["line"] = f.location.line;
    }
    findings.push_back({{"rule", f.rule},
                        {"category", f.category},
                        {"dimension", f.dimension},
                        {"root_cause", f.root_cause},
                        {"severity", to_string(f.severity)},
                        {"phase", to_string(f.phase)},
                        {"stage", f.stage.empty() ? json(nullptr) : json(f.stage)},
                        {"message", f.message},
                        {"location", location},
                        {"hint", f.hint},
                        {"retry", to_string(f.retry)}});
  }
  json clamps = json::array();
  for (const auto& c : report.clamps) {
    json location = json::object();
    if (c.location.known()) {
      location["file"] = c.location.file.string();
      if (c.location.line > 0) location["line"] = c.location.line;
    }
    clamps.push_back(
        {{"what", c.what}, {"original", c.original}, {"value", c.value}, {"location", location}});
  }
  return {{"schema", "preflight.report/v1"},
          {"verdict", report.verdict},
          {"job", {{"name", report.job_name}, {"file", report.job_file}}},
          {"platform", report.platform},
          {"image", {{"ref", report.image_ref}, {"digest", report.image_digest}}},
          {"stages", stages},
          {"findings", findings},
          {"clamps", clamps},
          {"notes", report.notes},
          {"duration_s", report.duration_s}};
}

Status write_json(const Report& report, const std::filesystem::path& file) {
  std::ofstream out(file);
  if (!out)
    return Error::bad_input("cannot write the report to " + file.string() + ": " + std::strerror(errno));
  out << to_json(report).dump(2) << "\n";
  if (!out) return Error::runtime("writing the report to " + file.string() + " failed");
  return Ok{};
}

}  // namespace preflight::report
