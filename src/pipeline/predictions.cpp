#include "pipeline/predictions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "model/category.hpp"
#include "util/text.hpp"

namespace preflight::pipeline {
namespace fs = std::filesystem;

namespace {

using model::Finding;
using model::Prediction;
using model::Severity;

bool is_prediction(const Finding& f) {
  return f.phase == model::Phase::Static && f.prediction != Prediction::None;
}

bool in_python_file(const Finding& f) { return f.location.line > 0 && f.location.file.extension() == ".py"; }

bool same_place(const SourceLocation& a, const SourceLocation& b) {
  return a.line > 0 && a.line == b.line &&
         a.file.lexically_normal().generic_string() == b.file.lexically_normal().generic_string();
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `text` names `subject` as a whole: a variable not inside a longer name, a path not
// as the tail of a longer one.
bool names(const std::string& text, const std::string& subject) {
  for (auto at = text.find(subject); at != std::string::npos; at = text.find(subject, at + 1)) {
    const char before = at > 0 ? text[at - 1] : ' ';
    const auto end = at + subject.size();
    const char after = end < text.size() ? text[end] : ' ';
    if (word_char(before) || (subject[0] == '/' && before == '/') || word_char(after)) continue;
    return true;
  }
  return false;
}

// The dry run failed at the predicted line, or for the predicted cause.
bool confirms(const Finding& failure, const Finding& prediction) {
  if (failure.severity != Severity::Error) return false;
  if (same_place(failure.location, prediction.location)) return true;
  if (failure.category != prediction.category) return false;
  if (!prediction.subject.empty() && names(failure.message, prediction.subject)) return true;
  return prediction.stage == "setup" && failure.stage == "setup";
}

// A file of the container as the code folder names it; empty outside it.
std::string in_code(const std::string& file, const std::string& code_dir) {
  if (code_dir.empty() || !is_under(file, code_dir)) return "";
  return fs::path(file).lexically_relative(code_dir).generic_string();
}

struct Coverage {
  std::set<std::pair<std::string, int>> reached;                       // (file in code, line)
  std::vector<std::pair<std::string, harness::EnteredEvent>> entered;  // (file in code, span)

  static Coverage of(const RunEvidence& run) {
    Coverage coverage;
    if (!run.events) return coverage;
    for (const auto& r : run.events->reached)
      if (auto file = in_code(r.file, run.code_container_dir); !file.empty())
        coverage.reached.emplace(file, r.line);
    for (const auto& e : run.events->entered)
      if (auto file = in_code(e.file, run.code_container_dir); !file.empty())
        coverage.entered.emplace_back(file, e);
    return coverage;
  }

  bool ran(const SourceLocation& where) const {
    return reached.count({where.file.lexically_normal().generic_string(), where.line}) > 0;
  }

  // The stage of the innermost function around `where` that ran, if any did.
  std::string stage_around(const SourceLocation& where) const {
    const std::string file = where.file.lexically_normal().generic_string();
    const harness::EnteredEvent* best = nullptr;
    for (const auto& [in, span] : entered) {
      if (in != file || where.line < span.first || where.line > span.last) continue;
      if (!best || span.last - span.first < best->last - best->first) best = &span;
    }
    return best ? best->stage : "";
  }
};

bool names_a_path(const Finding& f) { return model::category_id(f.category) == "path-not-found"; }

// What the line does, where nothing in the dry run tells its stage.
std::string inferred_stage(const Finding& f) {
  if (!f.stage.empty()) return f.stage;
  if (names_a_path(f)) return "data";
  return "init";
}

void mark_not_reached(Finding& f, const std::string& stage, bool strict) {
  f.prediction = Prediction::NotReached;
  if (!stage.empty()) f.stage = stage;
  f.stage = inferred_stage(f);
  if (f.severity == Severity::Error && !strict) f.severity = Severity::Warning;
  f.message = "not reached in the dry run; if the job gets there on the platform, " + f.message;
}

// Neither confirmed nor refuted: the dry run ended before it could tell.
void leave_open(Finding& f, const std::string& why, bool strict) {
  f.stage = inferred_stage(f);
  if (f.severity == Severity::Error && !strict) f.severity = Severity::Warning;
  f.message += " (" + why + ")";
}

void mark_refuted(Finding& f, const std::string& how) {
  f.prediction = Prediction::Refuted;
  f.severity = Severity::Info;
  f.stage = inferred_stage(f);
  f.message += " — refuted: " + how;
}

// A prediction about a start-up line, a script or a configuration file: settled by how its
// step ended, since the harness sees only Python lines.
void settle_step_prediction(Finding& f, const RunEvidence& run, bool strict) {
  const bool setup_failed = run.has_setup && run.setup_exit != 0;
  if (f.stage == "setup") {
    if (!setup_failed) return mark_refuted(f, "the setup step ran without failing");
    return leave_open(f, "the setup step failed first, for another reason", strict);
  }
  if (setup_failed) return mark_not_reached(f, "", strict);
  if (run.command_passed) return mark_refuted(f, "the job ran to its end without failing");
  leave_open(f, "the command failed first, for another reason", strict);
}

}  // namespace

bool is_certain_error(const Finding& finding) {
  return finding.phase == model::Phase::Static && finding.prediction == Prediction::None &&
         finding.severity == Severity::Error;
}

std::vector<SourceLocation> watched_lines(const std::vector<Finding>& findings) {
  std::vector<SourceLocation> lines;
  for (const auto& f : findings)
    if (is_prediction(f) && in_python_file(f) && !f.location.file.is_absolute()) lines.push_back(f.location);
  return lines;
}

std::vector<Finding> settle_predictions(std::vector<Finding> static_findings,
                                        std::vector<Finding> dry_run_findings, const RunEvidence& run,
                                        bool strict) {
  const Coverage coverage = Coverage::of(run);
  std::vector<Finding> out;
  for (auto& f : static_findings) {
    if (!is_prediction(f)) {
      out.push_back(std::move(f));
      continue;
    }
    auto failure = std::find_if(dry_run_findings.begin(), dry_run_findings.end(),
                                [&](const Finding& d) { return confirms(d, f); });
    if (failure != dry_run_findings.end()) {
      failure->prediction = Prediction::Confirmed;
      if (!failure->location.known()) failure->location = f.location;  // a setup line, say
      failure->predicted.push_back({f.rule, f.message, f.location});
      continue;
    }
    if (!in_python_file(f)) {
      settle_step_prediction(f, run, strict);
    } else if (coverage.ran(f.location) && (run.command_passed || !names_a_path(f))) {
      mark_refuted(f, "the line ran in the dry run without failing");
    } else if (coverage.ran(f.location)) {
      // A path is used elsewhere than where it is written: only a run to the end tells.
      leave_open(f, "the line ran, but the dry run ended before the path's use could tell", strict);
    } else if (run.watched) {
      mark_not_reached(f, coverage.stage_around(f.location), strict);
    } else {
      leave_open(f, "without the harness, the dry run cannot tell whether the line ran", strict);
    }
    out.push_back(std::move(f));
  }
  for (auto& f : dry_run_findings) out.push_back(std::move(f));
  return out;
}

void leave_unverified(std::vector<Finding>& findings, bool strict) {
  for (auto& f : findings) {
    if (!is_prediction(f)) continue;
    f.stage = inferred_stage(f);
    if (f.severity == Severity::Error && !strict) f.severity = Severity::Warning;
  }
}

}  // namespace preflight::pipeline
