// Static findings are predictions unless they are certain (docs/diagnosis.md "Predictions"):
// the dry run confirms, refutes or does not reach each one, and only the dry run's evidence
// or a certain static fact makes a `fail` verdict.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/events.hpp"
#include "model/finding.hpp"

namespace preflight::pipeline {

// A static error that holds on the platform whatever the job's inputs and branches: it stops
// the run before the container starts.
bool is_certain_error(const model::Finding& finding);

// The lines of the job's Python files that predictions are about, for the harness to watch.
std::vector<SourceLocation> watched_lines(const std::vector<model::Finding>& findings);

// What the dry run showed, as far as settling predictions needs it.
struct RunEvidence {
  bool watched = false;           // the harness loaded, so reached lines were reported
  std::optional<int> setup_exit;  // the setup step's status; nullopt: none, or it never ended
  bool has_setup = false;
  bool command_passed = false;  // the command exited 0 and was not stopped
  const harness::HarnessEvents* events = nullptr;
  std::string code_container_dir;  // where the code folder is in the container
};

// The static findings, their predictions settled, followed by the dry run's findings: a
// prediction the dry run confirmed is told once, as the dry run's finding with the static
// evidence added; a refuted one becomes `info`; one not reached a warning that says so (an
// error still with `strict`).
std::vector<model::Finding> settle_predictions(std::vector<model::Finding> static_findings,
                                               std::vector<model::Finding> dry_run_findings,
                                               const RunEvidence& run, bool strict);

// Without a dry run (`preflight check`, or a run stopped by a certain error), predictions stay
// unverified: warnings, or errors with `strict`.
void leave_unverified(std::vector<model::Finding>& findings, bool strict);

}  // namespace preflight::pipeline
