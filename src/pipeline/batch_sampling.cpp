#include "pipeline/batch_sampling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace preflight::pipeline {

namespace {

// The stages that run on the sampled batches.
constexpr std::array<std::string_view, 4> kSampledStages = {"train", "validate", "evaluate", "predict"};

const model::Finding* first_dry_run_error(const std::vector<model::Finding>& findings) {
  for (const auto& finding : findings)
    if (finding.severity == model::Severity::Error && finding.phase == model::Phase::Dryrun) return &finding;
  return nullptr;
}

const harness::ClampEvent* batch_clamp(const harness::HarnessEvents& events) {
  for (const auto& clamp : events.clamps)
    if (clamp.kind == "batch") return &clamp;
  return nullptr;
}

// The job's line a full-size check's exception names, relative to the code folder.
SourceLocation failed_at(const harness::FullSizeCheck& check, const std::string& code_dir) {
  if (!check.exception) return {};
  const harness::Frame* frame = check.exception->user_frame();
  return frame ? harness::location_in_code(*frame, code_dir) : SourceLocation{};
}

bool same_line(const SourceLocation& a, const SourceLocation& b) {
  return a.known() && a.file == b.file && a.line == b.line;
}

// The full-size check that failed at the finding's line, if any.
const harness::FullSizeCheck* confirming(const model::Finding& finding, const harness::HarnessEvents& events,
                                         const std::string& code_dir) {
  for (const auto& check : events.full_size)
    if (check.exception && !check.shape_only_limit && same_line(failed_at(check, code_dir), finding.location))
      return &check;
  return nullptr;
}

std::string loop_text(const harness::FullSizeCheck& check, const std::string& code_dir) {
  const auto where = check.where ? harness::location_in_code(*check.where, code_dir) : SourceLocation{};
  return where.known() ? "the loop at " + where.str() : "a loop";
}

}  // namespace

bool depends_on_batch(const std::string& category) {
  // A missing path, module, name or permission is the same at any size; running out of memory
  // or time at a sampled size runs out at the job's too; the GPU's memory is the job's own
  // batch's already (the model of docs/harness.md "Measuring a step").
  static const std::array<std::string_view, 15> kAnySize = {
      "GPU Out of Memory",       "Timeout/Hang",      "Permission Denied",  "Path Not Found",
      "Library Not Found",       "Syntax Error",      "Undefined Variable", "Attribute Not Found",
      "Key Not Found",           "Disk Full",         "Corrupt Data",       "Unexpected Encoding",
      "Shared Memory Exhausted", "CPU Out of Memory", "Output Lost"};
  return std::find(kAnySize.begin(), kAnySize.end(), category) == kAnySize.end();
}

std::optional<std::string> unconfirmed_at_full_size(const std::vector<model::Finding>& findings,
                                                    const harness::HarnessEvents& events,
                                                    const std::string& code_dir) {
  const harness::ClampEvent* clamp = batch_clamp(events);
  const model::Finding* failure = first_dry_run_error(findings);
  if (!clamp || !failure || !depends_on_batch(failure->category)) return std::nullopt;
  if (std::find(kSampledStages.begin(), kSampledStages.end(), failure->stage) == kSampledStages.end())
    return std::nullopt;
  if (confirming(*failure, events, code_dir)) return std::nullopt;
  std::string checked = "which the job's own batch size, on shape-only tensors, did not show";
  for (const auto& check : events.full_size) {
    if (check.shape_only_limit && check.exception)
      checked = fmt::format("which shape-only tensors could not check ({} at {})", check.exception->type,
                            failed_at(check, code_dir).str());
  }
  const std::string at = failure->location.known() ? " at " + failure->location.str() : "";
  return fmt::format(
      "the dry run first trained on batches of {} (sampled from the job's {}) and failed with {}{}, {}: it "
      "ran "
      "again at the job's own batch size, and this report is that run's",
      clamp->value, clamp->original.value_or("?"), failure->category, at, checked);
}

std::vector<std::string> full_size_notes(const std::vector<model::Finding>& findings,
                                         const harness::HarnessEvents& events, const std::string& code_dir) {
  std::vector<std::string> notes;
  if (const model::Finding* failure = first_dry_run_error(findings)) {
    if (const auto* check = confirming(*failure, events, code_dir); check && batch_clamp(events))
      notes.push_back(
          fmt::format("{} at {} fails at the job's own batch size of {} too (its first iteration "
                      "run again on shape-only tensors)",
                      failure->category, failure->location.str(), check->batch));
  }
  for (const auto& check : events.full_size) {
    if (check.reached == "unavailable") {
      notes.push_back(
          fmt::format("{}: the dry run trains at the job's own batch size, however costly its step, and "
                      "checks nothing on "
                      "shape-only tensors",
                      check.why));
      break;
    }
  }
  for (const auto& check : events.full_size) {
    if (!check.sampled) continue;  // the job's own batch ran: what the check saw, the run saw too
    if (check.reached == "timeout" || check.reached == "killed") {
      notes.push_back(
          fmt::format("the first iteration of {} at the job's own batch size ({}) did not end {}; "
                      "the step's GPU memory and FLOPs are the sampled batch's",
                      loop_text(check, code_dir), check.batch,
                      check.reached == "timeout" ? "within 60 s" : "(the check was killed)"));
    } else if (check.shape_only_limit && check.exception) {
      notes.push_back(
          fmt::format("the first iteration of {} could not run at the job's own batch size on shape-only "
                      "tensors: {} at {} ({})",
                      loop_text(check, code_dir), check.exception->type, failed_at(check, code_dir).str(),
                      check.exception->message.substr(0, 200)));
    }
  }
  std::vector<std::string> made_up;
  for (const auto& check : events.full_size) {
    if (!check.sampled) continue;
    for (const auto& value : check.made_up) {
      const auto where = value.where ? harness::location_in_code(*value.where, code_dir) : SourceLocation{};
      const std::string text = value.what + (where.known() ? " at " + where.str() : "");
      if (std::find(made_up.begin(), made_up.end(), text) == made_up.end()) made_up.push_back(text);
    }
  }
  if (!made_up.empty()) {
    std::string list;
    for (const auto& text : made_up) list += (list.empty() ? "" : "; ") + text;
    notes.push_back(
        "at the job's own batch size the shape-only tensors hold no values, so 0 (False) stood in "
        "for: " +
        list);
  }
  return notes;
}

}  // namespace preflight::pipeline
