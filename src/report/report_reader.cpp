#include "report/report_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <utility>

#include "util/input_bounds.hpp"
#include "util/json_fields.hpp"

namespace preflight::report {
namespace {

using nlohmann::json;
namespace jf = json_fields;

// The enumerator whose to_string is `name`, among `values`; none for another name.
template <class Enum, std::size_t N>
std::optional<Enum> enum_named(std::string_view name, const std::array<Enum, N>& values) {
  for (Enum value : values) {
    const char* text = model::to_string(value);
    if (text && name == text) return value;
  }
  return std::nullopt;
}

SourceLocation location_of(const json& object) {
  const json& where = object.is_object() && object.contains("location") ? object["location"] : json();
  return {jf::text(where, "file"), jf::integer(where, "line"), 0};
}

Result<model::Finding> finding_of(const json& item, const std::string& origin, std::size_t index) {
  const std::string at = origin + ": findings[" + std::to_string(index) + "]";
  if (!item.is_object()) return Error::bad_input(at + " is not an object");
  model::Finding f;
  f.rule = jf::text(item, "rule");
  f.category = jf::text(item, "category");
  f.dimension = jf::text(item, "dimension");
  f.root_cause = jf::text(item, "root_cause");
  f.stage = jf::text(item, "stage");
  f.message = jf::text(item, "message");
  f.location = location_of(item);
  f.hint = jf::text(item, "hint");
  const auto severity =
      enum_named(jf::text(item, "severity"),
                 std::array{model::Severity::Error, model::Severity::Warning, model::Severity::Info});
  const auto phase =
      enum_named(jf::text(item, "phase"), std::array{model::Phase::Static, model::Phase::Dryrun});
  const auto retry =
      enum_named(jf::text(item, "retry"), std::array{model::Retry::Useless, model::Retry::MayHelp});
  if (!severity || !phase || !retry)
    return Error::bad_input(at + ": severity, phase and retry must be among those docs/formats.md lists");
  f.severity = *severity;
  f.phase = *phase;
  f.retry = *retry;
  f.prediction = enum_named(jf::text(item, "prediction"),
                            std::array{model::Prediction::Unverified, model::Prediction::Confirmed,
                                       model::Prediction::Refuted, model::Prediction::NotReached})
                     .value_or(model::Prediction::None);
  for (const json& evidence : jf::list(item, "predicted"))
    f.predicted.push_back({jf::text(evidence, "rule"), jf::text(evidence, "message"), location_of(evidence)});
  return f;
}

// Where `offset` is in `text`, as a place in the file `origin`.
SourceLocation place_in(const std::string& text, std::size_t offset, const std::string& origin) {
  const auto before = text.begin() + static_cast<std::ptrdiff_t>(offset);
  const auto line_start = std::find(std::make_reverse_iterator(before), text.rend(), '\n').base();
  return {origin, 1 + static_cast<int>(std::count(text.begin(), before, '\n')),
          1 + static_cast<int>(before - line_start)};
}

}  // namespace

Result<json> parse_report_json(const std::string& text, const std::string& origin) {
  if (const auto deep = json_fields::nesting_beyond(text, kMaxNesting))
    return Error::bad_input(
        fmt::format("arrays and objects nested more than {} deep; no report is: remove the "
                    "file, or run its job again",
                    kMaxNesting),
        place_in(text, *deep, origin));
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return Error::bad_input(origin +
                            " is not JSON: was its run stopped while writing it? Run its job again, " +
                            "or remove the file");
  return root;
}

bool is_report(const json& root) { return jf::text(root, "schema").starts_with("preflight.report/"); }

Result<Report> report_from_json(const json& root, const std::string& origin) {
  if (!is_report(root))
    return Error::bad_input(origin + " is not a Preflight report: it has no \"schema\" \"" + kReportSchema +
                            "\"");
  if (const std::string schema = jf::text(root, "schema"); schema != kReportSchema)
    return Error::bad_input(origin + " is a report of schema \"" + schema + "\"; this Preflight reads \"" +
                            kReportSchema + "\": collect it with the Preflight that wrote it");
  Report report;
  report.verdict = jf::text(root, "verdict");
  if (report.verdict != "pass" && report.verdict != "fail" && report.verdict != "error")
    return Error::bad_input(origin + ": \"verdict\" must be pass, fail or error");
  const json& job = root.contains("job") ? root["job"] : json();
  report.job_name = jf::text(job, "name");
  report.job_file = jf::text(job, "file");
  report.code_dir = jf::text(job, "code");
  report.platform = jf::text(root, "platform");
  const json& image = root.contains("image") ? root["image"] : json();
  report.image_ref = jf::text(image, "ref");
  report.image_digest = jf::text(image, "digest");
  for (const json& stage : jf::list(root, "stages"))
    report.stages.push_back(
        {jf::text(stage, "name"), jf::text(stage, "status"), jf::number(stage, "seconds")});
  report.dry_run = !report.stages.empty();
  const json& findings = jf::list(root, "findings");
  for (std::size_t i = 0; i < findings.size(); ++i) {
    auto finding = finding_of(findings[i], origin, i);
    if (!finding) return finding.error();
    report.findings.push_back(std::move(*finding));
  }
  for (const json& clamp : jf::list(root, "clamps")) {
    const auto value = [&](const char* key) {
      return clamp.is_object() && clamp.contains(key) ? clamp[key] : json();
    };
    report.clamps.push_back({jf::text(clamp, "what"), value("original"), value("value"), location_of(clamp),
                             jf::text(clamp, "kind")});
  }
  report.notes = jf::strings(root, "notes");
  report.duration_s = jf::number(root, "duration_s");
  if (report.verdict == "error") {
    const json& error = root.contains("error") ? root["error"] : json();
    report.error = RunError{jf::number(error, "exit") == 2 ? 2 : 3, jf::text(error, "message")};
  }
  return report;
}

}  // namespace preflight::report
