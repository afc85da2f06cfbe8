// Matching one rule's conditions against what one step of the job (setup or command) left.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnosis/failure_rules.hpp"
#include "model/run_evidence.hpp"

namespace preflight::diagnosis {

// What the failing step left, as rules see it.
struct StepEvidence {
  bool setup = false;
  const harness::ExceptionEvent* exception = nullptr;  // the one that ended it, if known
  std::vector<const model::OutputLine*> lines;         // the step's output, in arrival order
  int exit_code = 0;
  int signal = 0;  // the terminating signal, also when only the exit status (128+N) tells it
  bool oom_killed = false;
  bool timed_out = false;
  bool disk_full = false;
};

// Named groups of the patterns that matched ("path", "module", ...), and the output line.
struct RuleMatch {
  std::map<std::string, std::string> captures;
  std::string line;
};

// Whether every condition holds; an output pattern takes the last line it matches.
std::optional<RuleMatch> match_rule(const RuleConditions& when, const StepEvidence& step);

// "FileNotFoundError" matches "FileNotFoundError" and "x.FileNotFoundError"; a qualified name
// matches the same class name from the same top package, ignoring leading underscores and
// submodules: "json.JSONDecodeError" matches "json.decoder.JSONDecodeError",
// "pickle.UnpicklingError" matches "_pickle.UnpicklingError". "*" matches any type.
bool exception_type_matches(std::string_view rule_name, std::string_view type);

}  // namespace preflight::diagnosis
