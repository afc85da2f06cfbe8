#include "report/finding.hpp"

namespace preflight::report {

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

}  // namespace preflight::report
