#include "pipeline/batch_sampling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "util/text.hpp"

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

std::string at_text(const std::optional<harness::Frame>& frame, const std::string& code_dir) {
  const auto where = frame ? harness::location_in_code(*frame, code_dir) : SourceLocation{};
  return where.known() ? " at " + where.str() : "";
}

// Each made-up value once, "what at file:line", joined.
std::string made_up_list(const std::vector<const harness::MadeUpValue*>& values,
                         const std::string& code_dir) {
  std::vector<std::string> texts;
  for (const auto* value : values) {
    std::string text = value->what + at_text(value->where, code_dir);
    if (std::find(texts.begin(), texts.end(), text) == texts.end()) texts.push_back(std::move(text));
  }
  std::string list;
  for (const auto& text : texts) list += (list.empty() ? "" : "; ") + text;
  return list;
}

bool shape_only_limit(const std::string& exception_type) {
  return exception_type.starts_with("torch._subclasses.");
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
  std::vector<const harness::MadeUpValue*> made_up;
  for (const auto& check : events.full_size) {
    if (!check.sampled) continue;
    for (const auto& value : check.made_up) made_up.push_back(&value);
  }
  if (!made_up.empty())
    notes.push_back(
        "at the job's own batch size the shape-only tensors hold no values, so 0 (False) stood in "
        "for: " +
        made_up_list(made_up, code_dir));
  return notes;
}

std::vector<std::string> shape_only_notes(const harness::HarnessEvents& events, const std::string& code_dir) {
  const harness::ShapeOnlyModel* model = harness::main_or_first(events.shape_only, events.main_pid);
  if (!model) return {};
  std::string note = fmt::format(
      "the model's parameters passed what a dry run holds on this host ({}, PREFLIGHT_HOST_PARAMETERS){}: "
      "from there on it ran on shape-only tensors, so its GPU memory, its FLOPs and every stage's calls, "
      "files and paths are the job's own at full size, but no value was computed: losses and metrics were "
      "not checked (a NaN loss goes unseen), and checkpoints were written without their data",
      human_size(model->limit), at_text(model->where, code_dir));
  std::vector<const harness::MadeUpValue*> made_up;
  for (const auto& value : model->made_up) made_up.push_back(&value);
  if (!made_up.empty()) note += "; made up: " + made_up_list(made_up, code_dir);
  return {note};
}

void soften_shape_only_limits(std::vector<model::Finding>& findings, const harness::HarnessEvents& events,
                              const std::string& code_dir) {
  bool softened = false;
  for (const auto& failure : events.exceptions) {
    const bool shape_only = std::any_of(events.shape_only.begin(), events.shape_only.end(),
                                        [&](const auto& model) { return model.pid == failure.pid; });
    if (!shape_only || !shape_only_limit(failure.type)) continue;
    const harness::Frame* frame = failure.user_frame();
    const SourceLocation at = frame ? harness::location_in_code(*frame, code_dir) : SourceLocation{};
    for (auto& finding : findings) {
      if (finding.severity != model::Severity::Error || finding.phase != model::Phase::Dryrun ||
          !same_line(finding.location, at))
        continue;
      finding.severity = model::Severity::Warning;
      finding.message = fmt::format(
          "the model ran on shape-only tensors (its parameters passed the host's share), which cannot run "
          "this line: {} ({}); the stages from {} on were not executed here",
          failure.type, failure.message.substr(0, 200), finding.stage.empty() ? "there" : finding.stage);
      finding.hint =
          "This is the dry run's limit, not the job's. Run the dry run where the model's parameters fit "
          "(raise PREFLIGHT_HOST_PARAMETERS, in bytes) to execute these stages on real values.";
      finding.retry = model::Retry::MayHelp;
      softened = true;
    }
  }
  // Outputs the job had yet to write when the dry run could go no further are no evidence.
  if (softened)
    std::erase_if(findings, [](const model::Finding& finding) { return finding.category == "Output Lost"; });
}

}  // namespace preflight::pipeline
