// Diagnosis: what a dry run left behind (evidence.hpp) → classified findings, by the rules of
// policies/rules/failures.yaml (docs/diagnosis.md for the order in which evidence is tried).
#pragma once

#include <vector>

#include "diagnosis/policies.hpp"
#include "model/finding.hpp"
#include "model/run_evidence.hpp"

namespace preflight::diagnosis {

// The findings of a dry run: none when the job passed, else one for the failure that ended
// it — classified, staged, located in the user's code, with the environment difference
// named where Preflight can tell it. A training step too large for the platform's GPU and a
// loss that turned NaN add findings before it, even when the job exited 0 (during_run.hpp).
std::vector<model::Finding> diagnose(const Policies& policies, const model::RunOutcome& outcome,
                                     const model::PlatformFacts& facts);

}  // namespace preflight::diagnosis
