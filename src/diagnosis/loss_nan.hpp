// A loss that turned NaN or infinite during training, reported by the harness even when the
// job carried on and exited 0: a run that trains on NaN is useless, so it is an error.
#pragma once

#include <optional>

#include "diagnosis/evidence.hpp"
#include "diagnosis/failure_rules.hpp"
#include "report/finding.hpp"

namespace preflight::diagnosis {

// The rule file's format describes how a run ended, not what happened during it, so this
// finding is built here; its root cause, severity, retry advice and hint come from the rule
// `loss-nan` (the category's fix when the file has no such rule).
std::optional<report::Finding> nonfinite_loss_finding(const FailureRules& rules, const RunOutcome& outcome,
                                                      const PlatformFacts& facts);

}  // namespace preflight::diagnosis
