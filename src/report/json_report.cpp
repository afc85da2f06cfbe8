#include <fstream>

#include "report/report.hpp"

namespace preflight::report {

std::string verdict_of(const std::vector<model::Finding>& findings) {
  for (const auto& finding : findings)
    if (finding.severity == model::Severity::Error) return "fail";
  return "pass";
}

int exit_status_of(const std::string& verdict) {
  if (verdict == "pass") return 0;
  if (verdict == "fail") return 1;
  return 3;
}

int exit_status_of(const Report& report) {
  return report.error ? report.error->exit_status : exit_status_of(report.verdict);
}

Report error_report(const std::string& job_file, const Error& error) {
  Report report;
  report.verdict = "error";
  report.job_file = job_file;
  std::error_code ec;
  report.job_path = std::filesystem::absolute(job_file, ec);
  report.code_dir = report.job_path.parent_path();
  report.dry_run = false;
  report.error = RunError{error.exit_status(), error.str()};
  return report;
}

SourceLocation place_of(const Report& report, const model::Finding& finding) {
  if (!finding.location.known()) return {report.job_path, 0, 0};
  SourceLocation place = finding.location;
  place.file = report.code_dir / finding.location.file;  // an absolute file stays as it is
  return place;
}

namespace {

template <typename T>
nlohmann::json optional(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// Parts of the step that report.json lists (`preflight estimate --json` lists all).
constexpr std::size_t kReportParts = 100;

nlohmann::json estimate_json(const Estimate& e) {
  using nlohmann::json;
  json out = {{"step_seconds",
               {{"here", e.step_seconds_here},
                {"data", optional(e.data_seconds)},
                {"platform", e.step_seconds},
                {"iteration", e.iteration_seconds},
                {"basis", e.step_basis}}},
              {"batch_size", optional(e.batch_size)},
              {"sampled_batch", optional(e.sampled_batch)},
              {"shape_only", e.shape_only},
              {"steps_per_epoch", optional(e.steps_per_epoch)},
              {"epochs", optional(e.epochs)},
              {"total_steps", optional(e.total_steps)},
              {"run_hours", optional(e.run_hours)},
              {"time_limit_hours", optional(e.time_limit_hours)},
              {"gpus", e.gpus},
              {"gpu", e.gpu_name.empty() ? json(nullptr) : json(e.gpu_name)},
              {"gpu_memory", nullptr},
              {"failure", nullptr},
              {"platform", e.projection ? projection_json(*e.projection, kReportParts) : json(nullptr)}};
  if (e.steps_per_hour) out["steps_per_hour"] = *e.steps_per_hour;  // a job with no end of its own
  if (e.gpu_needed_bytes)
    out["gpu_memory"] = {{"needed_bytes", *e.gpu_needed_bytes}, {"available_bytes", e.gpu_available_bytes}};
  if (e.failure_stage)
    out["failure"] = {{"stage", *e.failure_stage},
                      {"after_steps", optional(e.failure_after_steps)},
                      {"after_hours", optional(e.failure_after_hours)},
                      {"gpu_hours_saved", optional(e.gpu_hours_saved)}};
  return out;
}

// {"file": ..., "line": ...}, each only when known.
nlohmann::json location_json(const SourceLocation& where) {
  nlohmann::json location = nlohmann::json::object();
  if (where.known()) {
    location["file"] = where.file.string();
    if (where.line > 0) location["line"] = where.line;
  }
  return location;
}

}  // namespace

nlohmann::json projection_json(const StepProjection& p, std::size_t max_parts) {
  using nlohmann::json;
  json parts = json::array();
  for (const PartEstimate& part : p.parts) {
    if (parts.size() >= max_parts) break;
    parts.push_back({{"kind", part.kind},
                     {"name", part.name},
                     {"shape", part.shape},
                     {"work", part.work},
                     {"calls", part.calls},
                     {"launches", part.launches},
                     {"flops", part.flops},
                     {"bytes", part.bytes},
                     {"here_seconds", optional(part.here_seconds)},
                     {"benchmarked", part.benchmarked},
                     {"seconds", {{"low", part.low}, {"typical", part.typical}, {"high", part.high}}},
                     {"bound", part.bound}});
  }
  return {
      {"gpu", p.gpu},
      {"precision", p.precision},
      {"compute_seconds", {{"low", p.compute_low}, {"typical", p.compute_typical}, {"high", p.compute_high}}},
      {"allreduce_seconds", p.allreduce_seconds},
      {"data_seconds", optional(p.data_seconds)},
      {"data_overlaps", p.data_overlaps},
      {"step_seconds", {{"low", p.step_low}, {"typical", p.step_typical}, {"high", p.step_high}}},
      {"bound", p.bound},
      {"memory_needed_bytes", optional(p.memory_needed_bytes)},
      {"basis", p.basis},
      {"run_hours", optional(p.run_hours)},
      {"gpu_hours", optional(p.gpu_hours)},
      {"cost_usd", optional(p.cost_usd)},
      {"price", p.price_source.empty() ? json(nullptr) : json(p.price_source)},
      {"parts_total", p.parts.size()},
      {"parts", std::move(parts)}};
}

nlohmann::json to_json(const Report& report) {
  using nlohmann::json;
  json stages = json::array();
  for (const auto& stage : report.stages)
    stages.push_back({{"name", stage.name}, {"status", stage.status}, {"seconds", stage.seconds}});
  json findings = json::array();
  for (const auto& f : report.findings) {
    json predicted = json::array();
    for (const auto& evidence : f.predicted)
      predicted.push_back({{"rule", evidence.rule},
                           {"message", evidence.message},
                           {"location", location_json(evidence.location)}});
    const char* prediction = to_string(f.prediction);
    findings.push_back({{"rule", f.rule},
                        {"category", f.category},
                        {"dimension", f.dimension},
                        {"root_cause", f.root_cause},
                        {"severity", to_string(f.severity)},
                        {"phase", to_string(f.phase)},
                        {"stage", f.stage.empty() ? json(nullptr) : json(f.stage)},
                        {"message", f.message},
                        {"location", location_json(f.location)},
                        {"hint", f.hint},
                        {"retry", to_string(f.retry)},
                        {"prediction", prediction ? json(prediction) : json(nullptr)},
                        {"predicted", predicted}});
  }
  json clamps = json::array();
  for (const auto& c : report.clamps) {
    clamps.push_back({{"what", c.what},
                      {"kind", c.kind.empty() ? json(nullptr) : json(c.kind)},
                      {"original", c.original},
                      {"value", c.value},
                      {"location", location_json(c.location)}});
  }
  json root = {
      {"schema", kReportSchema},
      {"verdict", report.verdict},
      {"job", {{"name", report.job_name}, {"file", report.job_file}, {"code", report.code_dir.string()}}},
      {"platform", report.platform},
      {"image", {{"ref", report.image_ref}, {"digest", report.image_digest}}},
      {"stages", stages},
      {"findings", findings},
      {"clamps", clamps},
      {"notes", report.notes},
      {"duration_s", report.duration_s},
      {"error", report.error ? json{{"exit", report.error->exit_status}, {"message", report.error->message}}
                             : json(nullptr)}};
  if (report.estimate) root["estimate"] = estimate_json(*report.estimate);
  return root;
}

Status write_report_file(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file);
  if (!out)
    return Error::bad_input("cannot write the report to " + file.string() + ": " + std::strerror(errno));
  out << text;
  if (!out) return Error::runtime("writing the report to " + file.string() + " failed");
  return Ok{};
}

Status write_json(const Report& report, const std::filesystem::path& file) {
  // A job's output can hold bytes that are not UTF-8: they become U+FFFD rather than an exception.
  return write_report_file(
      file, to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace preflight::report
