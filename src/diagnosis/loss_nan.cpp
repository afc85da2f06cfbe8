#include "diagnosis/loss_nan.hpp"

#include <fmt/format.h>

#include "diagnosis/traceback.hpp"

namespace preflight::diagnosis {

namespace {

constexpr const char* kCategory = "Loss NaN";
constexpr const char* kRuleId = "loss-nan";

// The main process's first non-finite loss, else any process's (a spawned rank).
const harness::NonfiniteEvent* first_nonfinite(const harness::HarnessEvents& events) {
  for (const harness::NonfiniteEvent& event : events.nonfinite) {
    if (event.pid == events.main_pid) return &event;
  }
  return events.nonfinite.empty() ? nullptr : &events.nonfinite.front();
}

SourceLocation location_of(const std::optional<harness::Frame>& where, const std::string& code_dir) {
  SourceLocation location;
  if (!where || where->file.empty() || !(where->user || is_under(where->file, code_dir))) return location;
  std::string file = where->file;
  if (is_under(file, code_dir)) file.erase(0, code_dir.size() + (code_dir.back() == '/' ? 0 : 1));
  location.file = file;
  location.line = where->line;
  return location;
}

}  // namespace

std::optional<report::Finding> nonfinite_loss_finding(const FailureRules& rules, const RunOutcome& outcome,
                                                      const PlatformFacts& facts) {
  const harness::NonfiniteEvent* event = first_nonfinite(outcome.events);
  if (!event) return std::nullopt;
  report::Finding finding;
  finding.rule = kRuleId;
  finding.category = kCategory;
  finding.root_cause = "Inappropriate Model Parameter/Structure";
  finding.phase = report::Phase::Dryrun;
  finding.stage = event->stage.empty() ? "train" : event->stage;
  if (const FailureCategory* category = rules.find_category(kCategory)) {
    finding.dimension = category->dimension;
    finding.hint = category->fix;
  }
  for (const FailureRule& rule : rules.rules()) {
    if (rule.id != kRuleId) continue;
    finding.root_cause = rule.root_cause;
    finding.severity = rule.severity;
    finding.retry = rule.retry;
    if (!rule.hint.empty()) finding.hint = rule.hint;
    break;
  }
  finding.message = fmt::format("the loss became {} at training step {} (backward() call {})",
                                event->value == "nan" ? "NaN" : "infinite", event->step, event->step);
  if (outcome.exit_code == 0 && outcome.signal == 0 && !outcome.timed_out)
    finding.message += "; the job carried on and exited 0 with a model trained on it";
  finding.location = location_of(event->where, facts.code_container_dir);
  return finding;
}

}  // namespace preflight::diagnosis
