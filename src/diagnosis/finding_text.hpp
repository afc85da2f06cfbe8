// Writing a finding from a matched rule: its message and hint filled in from what was
// captured, the environment difference named, the stage and the place in the user's code.
#pragma once

#include <optional>
#include <string>

#include "diagnosis/failure_rules.hpp"
#include "diagnosis/policies.hpp"
#include "diagnosis/rule_match.hpp"
#include "model/finding.hpp"
#include "model/run_evidence.hpp"

namespace preflight::diagnosis {

// The step of the job that failed, with the exception it ended on (held here).
struct FailedStep {
  StepEvidence evidence;
  std::optional<harness::ExceptionEvent> exception;
  std::string stage;
  std::string why;                          // what the job was last seen doing ("DataLoader iterated")
  std::optional<harness::Frame> last_seen;  // where, when no exception says where it failed
};

model::Finding compose_finding(const Policies& policies, const FailureRule& rule, const RuleMatch& match,
                               const FailedStep& step, const model::RunOutcome& outcome,
                               const model::PlatformFacts& facts);

// A failure no rule matched (a rules file without fallbacks): still an error finding.
model::Finding unmatched_finding(const FailureRules& rules, const FailedStep& step);

// Replaces each {{name}} that `vars` holds; "${{...}}" (job.yaml syntax) is left as written.
std::string render(const std::string& text, const std::map<std::string, std::string>& vars);

}  // namespace preflight::diagnosis
