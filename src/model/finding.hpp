// A Finding is one thing Preflight has to tell the user about the job: what would fail (or
// may), classified by the ICSE 2020 taxonomy, where in the code, why, and what to do.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace preflight::model {

enum class Severity { Error, Warning, Info };
enum class Phase { Static, Dryrun };
enum class Retry { Useless, MayHelp };
// What the dry run said of a static finding that is a prediction (docs/diagnosis.md
// "Predictions"). None: not a prediction (a dry-run finding, a certain static fact, advice).
enum class Prediction { None, Unverified, Confirmed, Refuted, NotReached };

// What the static checks had said of a failure the dry run then showed: kept on the dry
// run's finding, so that one failure is told once with both pieces of evidence.
struct StaticEvidence {
  std::string rule;
  std::string message;
  SourceLocation location;
};

struct Finding {
  std::string rule;        // rule id from policies/rules/, e.g. "path-not-found"
  std::string category;    // one of the 20 categories (or one added in the rules file)
  std::string dimension;   // "Execution Environment", ...
  std::string root_cause;  // "Environment Difference", ...
  Severity severity = Severity::Error;
  Phase phase = Phase::Dryrun;
  std::string stage;  // "setup" ... "predict"; empty when none applies
  std::string message;
  SourceLocation location;  // file relative to the job's code folder where possible
  std::string hint;
  Retry retry = Retry::Useless;
  Prediction prediction = Prediction::None;
  std::vector<StaticEvidence> predicted;  // for a confirmed prediction
  // What a static finding is about (a path, a variable, a module), to match the dry run's
  // failure against it; not part of report.json.
  std::string subject;
};

const char* to_string(Severity);
const char* to_string(Phase);
const char* to_string(Retry);
const char* to_string(Prediction);  // nullptr for Prediction::None

// " in stage checkpoint at train.py:18": what follows the category in a finding's heading.
std::string where_text(const Finding& finding);
// The message, then "hint: ..." on a line of its own when there is a hint.
std::string message_and_hint(const Finding& finding);

}  // namespace preflight::model
