// A Finding is one thing Preflight has to tell the user about the job: what would fail (or
// may), classified by the ICSE 2020 taxonomy, where in the code, why, and what to do.
#pragma once

#include <optional>
#include <string>

#include "util/error.hpp"

namespace preflight::report {

enum class Severity { Error, Warning, Info };
enum class Phase { Static, Dryrun };
enum class Retry { Useless, MayHelp };

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
};

const char* to_string(Severity);
const char* to_string(Phase);
const char* to_string(Retry);

// " in stage checkpoint at train.py:18": what follows the category in a finding's heading.
std::string where_text(const Finding& finding);
// The message, then "hint: ..." on a line of its own when there is a hint.
std::string message_and_hint(const Finding& finding);

}  // namespace preflight::report
