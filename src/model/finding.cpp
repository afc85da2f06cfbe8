#include "model/finding.hpp"

namespace preflight::model {

// The spellings of report.json v1 (docs/formats.md).
const char* to_string(Severity severity) {
  switch (severity) {
    case Severity::Error:
      return "error";
    case Severity::Warning:
      return "warning";
    case Severity::Info:
      return "info";
  }
  return "error";
}

const char* to_string(Phase phase) { return phase == Phase::Static ? "static" : "dryrun"; }

const char* to_string(Retry retry) { return retry == Retry::Useless ? "useless" : "may_help"; }

const char* to_string(Prediction prediction) {
  switch (prediction) {
    case Prediction::None:
      return nullptr;
    case Prediction::Unverified:
      return "unverified";
    case Prediction::Confirmed:
      return "confirmed";
    case Prediction::Refuted:
      return "refuted";
    case Prediction::NotReached:
      return "not_reached";
  }
  return nullptr;
}

std::string where_text(const Finding& finding) {
  std::string out;
  if (!finding.stage.empty()) out += " in stage " + finding.stage;
  if (finding.location.known()) out += " at " + finding.location.str();
  return out;
}

std::string message_and_hint(const Finding& finding) {
  return finding.hint.empty() ? finding.message : finding.message + "\nhint: " + finding.hint;
}

}  // namespace preflight::model
