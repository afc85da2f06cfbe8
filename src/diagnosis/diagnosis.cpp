#include "diagnosis/diagnosis.hpp"

#include <algorithm>
#include <functional>

#include "diagnosis/clamp_consequence.hpp"
#include "diagnosis/during_run.hpp"
#include "diagnosis/finding_text.hpp"
#include "diagnosis/operation_stage.hpp"
#include "diagnosis/traceback.hpp"
#include "util/text.hpp"

namespace preflight::diagnosis {

namespace {

using harness::ExceptionEvent;
using harness::HarnessEvents;

using Step = FailedStep;

int signal_of(int exit_code, int signal) {
  if (signal != 0) return signal;
  return exit_code > 128 && exit_code <= 128 + 64 ? exit_code - 128 : 0;
}

std::vector<std::string> stderr_of(const std::vector<const model::OutputLine*>& lines) {
  std::vector<std::string> out;
  for (const model::OutputLine* line : lines) {
    if (line->stream == model::OutputLine::Stream::Stderr) out.push_back(line->text);
  }
  return out;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t end = std::min(text.find('\n', from), text.size());
    out.push_back(text.substr(from, end - from));
    from = end + 1;
  }
  return out;
}

// Types as rules name them, frames marked as the user's by the code folder, an errno and a
// path read from an OSError's message, and a DataLoader worker's re-raised exception
// unwrapped to the worker's own traceback (its frames locate the bug).
ExceptionEvent normalized(ExceptionEvent event, const std::string& code_dir) {
  if (event.type.rfind("builtins.", 0) == 0) event.type.erase(0, 9);
  for (harness::Frame& frame : event.frames) frame.user = frame.user || is_under(frame.file, code_dir);
  if (event.message.find("Original Traceback (most recent call last):") != std::string::npos) {
    if (auto inner = parse_traceback(split_lines(event.message), code_dir)) {
      event.message = inner->message;
      if (!inner->frames.empty()) event.frames = std::move(inner->frames);
    }
  }
  if (!event.errno_value) event.errno_value = errno_in(event.message);
  if (event.path.empty()) event.path = oserror_filename(event.message);
  return event;
}

// A distributed job's first exception in any rank, by the wall clock: the other ranks and the
// launcher fail because of it.
const ExceptionEvent* first_in_a_rank(const HarnessEvents& events) {
  const ExceptionEvent* first = nullptr;
  double first_at = 0;
  for (const ExceptionEvent& event : events.exceptions) {
    for (const harness::RankEvent& rank : events.ranks) {
      if (rank.pid != event.pid || event.stage == "setup") continue;
      if (!first || rank.started + event.t < first_at) first = &event, first_at = rank.started + event.t;
    }
  }
  return first;
}

// The exception that ended the job: a rank's first, else the main process's (the first to
// report a stage) last one, else the last of any process. Exceptions of the setup step are
// not the command's.
const ExceptionEvent* ending_exception(const HarnessEvents& events) {
  if (const ExceptionEvent* in_rank = first_in_a_rank(events)) return in_rank;
  const int main_pid = !events.stages.empty()       ? events.stages.front().pid
                       : !events.exceptions.empty() ? events.exceptions.front().pid
                                                    : 0;
  const ExceptionEvent* last = nullptr;
  const ExceptionEvent* last_main = nullptr;
  for (const ExceptionEvent& event : events.exceptions) {
    if (event.stage == "setup") continue;
    last = &event;
    if (event.pid == main_pid) last_main = &event;
  }
  return last_main ? last_main : last;
}

// The stage the job was in at time `t` of process `pid` (0: any process, any time).
const harness::StageEvent* stage_at(const HarnessEvents& events, int pid, std::optional<double> t) {
  const harness::StageEvent* found = nullptr;
  for (const harness::StageEvent& stage : events.stages) {
    if (stage.stage == "setup") continue;
    if (pid != 0 && stage.pid != pid) continue;
    if (t && stage.t > *t) continue;
    found = &stage;
  }
  return found;
}

// A training step ran before time `t` of process `pid` (0: any process): in that process, or
// in one of the job's that ran earlier (`train.py && predict.py`).
bool trained_before(const HarnessEvents& events, int pid, double t) {
  const std::optional<double> at = events.wall_time(pid, t);
  return std::any_of(events.stages.begin(), events.stages.end(), [&](const harness::StageEvent& s) {
    if (s.stage != "train") return false;
    if (pid == 0 || s.pid == pid) return s.t <= t;
    const std::optional<double> then = events.wall_time(s.pid, s.t);
    return at && then && *then <= *at;
  });
}

Step setup_step(const model::RunOutcome& outcome, const model::PlatformFacts& facts) {
  Step step;
  step.stage = "setup";
  step.evidence.setup = true;
  step.evidence.exit_code = outcome.setup_exit.value_or(outcome.exit_code);
  step.evidence.signal = signal_of(step.evidence.exit_code, outcome.setup_exit ? 0 : outcome.signal);
  for (const model::OutputLine& line : outcome.output) {
    if (line.setup) step.evidence.lines.push_back(&line);
  }
  for (const ExceptionEvent& event : outcome.events.exceptions) {
    if (event.stage == "setup") step.exception = normalized(event, facts.code_container_dir);
  }
  if (!step.exception) {
    step.exception = parse_traceback(stderr_of(step.evidence.lines), facts.code_container_dir);
  }
  return step;
}

Step command_step(const model::RunOutcome& outcome, const model::PlatformFacts& facts) {
  Step step;
  step.evidence.exit_code = outcome.exit_code;
  step.evidence.signal = signal_of(outcome.exit_code, outcome.signal);
  for (const model::OutputLine& line : outcome.output) {
    if (!line.setup) step.evidence.lines.push_back(&line);
  }
  const HarnessEvents& events = outcome.events;
  // Where the job's main process was last (its DataLoader workers report stages too).
  const harness::StageEvent* last = stage_at(events, events.main_pid > 0 ? events.main_pid : 0, std::nullopt);
  if (const ExceptionEvent* ending = ending_exception(events)) {
    step.exception = normalized(*ending, facts.code_container_dir);
    if (const harness::StageEvent* then = stage_at(events, ending->pid, ending->t)) last = then;
    step.stage = ending->stage;
  } else {
    // Without the harness (or when it saw nothing), the traceback Python printed.
    step.exception = parse_traceback(stderr_of(step.evidence.lines), facts.code_container_dir);
  }
  if (step.stage.empty()) step.stage = last ? last->stage : "init";
  if (step.exception) {
    const bool trained = trained_before(events, step.exception->pid, step.exception->t);
    if (auto operation = stage_of_operation(*step.exception, facts, step.stage, trained))
      step.stage = *operation;
  }
  if (last) step.why = last->why;
  if (last && last->where && last->where->user) step.last_seen = last->where;
  // A run stopped at its timeout: where its main process was waiting, from the harness.
  for (auto frame = outcome.stopped_at.rbegin(); !step.exception && frame != outcome.stopped_at.rend();
       ++frame) {
    if (frame->user) {
      step.last_seen = *frame;
      break;
    }
  }
  return step;
}

bool any_line(const model::RunOutcome& outcome, bool setup) {
  for (const model::OutputLine& line : outcome.output) {
    if (line.setup == setup) return true;
  }
  return false;
}

// The step that failed, if any: a setup that exited non-zero (or was stopped before it
// finished), else a command that did not exit 0.
std::optional<Step> failing_step(const model::RunOutcome& outcome, const model::PlatformFacts& facts) {
  const bool stopped = outcome.timed_out || outcome.oom_killed || outcome.disk_full;
  const bool setup_failed = outcome.setup_exit
                                ? *outcome.setup_exit != 0
                                : stopped && any_line(outcome, true) && !any_line(outcome, false);
  std::optional<Step> step;
  if (setup_failed) {
    step = setup_step(outcome, facts);
  } else if (outcome.exit_code != 0 || outcome.signal != 0 || outcome.timed_out || outcome.disk_full) {
    step = command_step(outcome, facts);
  } else {
    return std::nullopt;
  }
  step->evidence.oom_killed = outcome.oom_killed;
  step->evidence.timed_out = outcome.timed_out;
  step->evidence.disk_full = outcome.disk_full;
  return step;
}

// Evidence is tried from the most to the least telling: how the run was stopped, the
// exception, an output line, any exception at all, then the exit status alone.
const std::vector<std::function<bool(const RuleConditions&)>>& tiers() {
  static const std::vector<std::function<bool(const RuleConditions&)>> order = {
      [](const RuleConditions& when) { return when.about_end(); },
      [](const RuleConditions& when) {
        return !when.about_end() && when.about_exception() && !when.any_exception();
      },
      [](const RuleConditions& when) {
        return !when.about_end() && !when.about_exception() && when.about_output();
      },
      [](const RuleConditions& when) { return !when.about_end() && when.any_exception(); },
      [](const RuleConditions& when) {
        return !when.about_end() && !when.about_exception() && !when.about_output();
      }};
  return order;
}

}  // namespace

namespace {

std::optional<model::Finding> failure_finding(const Policies& policies, const model::RunOutcome& outcome,
                                              const model::PlatformFacts& facts) {
  const FailureRules& rules = policies.failures;
  std::optional<Step> step = failing_step(outcome, facts);
  if (!step) return std::nullopt;
  // Pointed to only once the step has its final place.
  step->evidence.exception = step->exception ? &*step->exception : nullptr;
  for (const auto& in_tier : tiers()) {
    for (const FailureRule& rule : rules.rules()) {
      if (!in_tier(rule.when)) continue;
      if (auto match = match_rule(rule.when, step->evidence)) {
        return compose_finding(policies, rule, *match, *step, outcome, facts);
      }
    }
  }
  return unmatched_finding(rules, *step);
}

}  // namespace

std::vector<model::Finding> diagnose(const Policies& policies, const model::RunOutcome& outcome,
                                     const model::PlatformFacts& facts) {
  std::vector<model::Finding> findings;
  std::optional<model::Finding> failure = failure_finding(policies, outcome, facts);
  if (failure) soften_clamp_consequence(*failure, outcome.events, facts);
  // In the order they would strike on the platform: a step too large for the GPU at the
  // first step, then a NaN loss, then whatever ended the job (which a NaN often caused). A
  // failure of the same category is the same problem, told once, with the figures.
  for (auto* during : {&gpu_memory_finding, &nonfinite_loss_finding}) {
    if (auto finding = during(policies.failures, outcome, facts)) {
      if (failure && failure->category == finding->category) failure.reset();
      findings.push_back(std::move(*finding));
    }
  }
  if (failure) findings.push_back(std::move(*failure));
  return findings;
}

}  // namespace preflight::diagnosis
