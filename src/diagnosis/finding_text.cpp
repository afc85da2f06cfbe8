#include "diagnosis/finding_text.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <cmath>

#include "diagnosis/attribution.hpp"
#include "diagnosis/job_words.hpp"
#include "diagnosis/traceback.hpp"
#include "util/text.hpp"

namespace preflight::diagnosis {

namespace {

using Vars = std::map<std::string, std::string>;

constexpr std::size_t kMessageLimit = 400;

// Several lines (a state_dict error lists the keys on the next lines) as one, cut short.
std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = c == '\n' || c == '\t' || c == '\r' || c == ' ';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > kMessageLimit) out = out.substr(0, kMessageLimit - 3) + "...";
  return out;
}

std::string duration(double seconds) {
  if (seconds <= 0) return "the dry-run timeout";
  const long whole = std::lround(seconds);
  if (whole >= 60 && whole % 60 == 0) return fmt::format("{}m", whole / 60);
  return fmt::format("{}s", whole);
}

// The first quoted absolute path in `text`, for messages that name one without an errno.
std::string quoted_path(const std::string& text) {
  static const re2::RE2 re(R"(['"](/[^'"]+)['"])");
  std::string path;
  re2::RE2::PartialMatch(text, re, &path);
  return path;
}

std::string relative_to(const std::string& file, const std::string& dir) {
  if (!is_under(file, dir)) return file;
  return file.substr(dir.size() + (dir.back() == '/' ? 0 : 1));
}

Vars variables(const RuleMatch& match, const FailedStep& step, const model::RunOutcome& outcome,
               const model::PlatformFacts& facts) {
  const harness::ExceptionEvent* exception = step.evidence.exception;
  const StepEvidence& evidence = step.evidence;
  Vars vars = {{"type", exception ? exception->type : ""},
               {"message", exception ? one_line(exception->message) : one_line(match.line)},
               {"line", one_line(match.line)},
               {"path", exception ? exception->path : ""},
               {"errno", exception && exception->errno_value ? std::to_string(*exception->errno_value) : ""},
               {"exit_code", std::to_string(evidence.exit_code)},
               {"signal", evidence.signal ? signal_name(evidence.signal) : ""},
               {"stage", step.stage},
               {"why", step.why},
               {"timeout", duration(outcome.timeout_s)},
               {"written", human_size(outcome.written_bytes)},
               {"platform", facts.platform},
               {"user", facts.user.empty() ? "uid " + std::to_string(facts.uid) : facts.user},
               {"uid", std::to_string(facts.uid)},
               {"home", facts.home},
               {"image", facts.image},
               {"code_dir", facts.code_container_dir},
               {"shm", human_size(facts.shm_bytes)},
               {"memory", facts.memory_bytes ? human_size(facts.memory_bytes) : "unlimited"},
               {"disk", facts.disk_bytes ? human_size(facts.disk_bytes) : "unlimited"},
               {"seccomp", facts.seccomp},
               {"input", input_words(facts.job_kind)},
               {"output", output_words(facts)},
               {"command_line", command_line_words(facts.job_kind)}};
  // What the rule captured fills what the evidence itself does not say.
  for (const auto& [name, value] : match.captures) {
    auto known = vars.find(name);
    if (known == vars.end() || known->second.empty()) vars[name] = value;
  }
  if (vars["path"].empty()) vars["path"] = quoted_path(exception ? exception->message : match.line);
  vars["set_env"] = set_variable_words(vars["key"].empty() ? "NAME" : vars["key"], facts.job_kind);
  return vars;
}

std::optional<EnvironmentDifference> attribute(Attribution kind, Vars& vars, const FailedStep& step,
                                               const model::PlatformFacts& facts,
                                               const PlatformVariables& variables) {
  switch (kind) {
    case Attribution::MissingPath:
      return missing_path(vars["path"], facts);
    case Attribution::MissingModule:
      return missing_module(vars["module"], facts);
    case Attribution::WriteDenied:
      return write_denied(vars["path"], facts);
    case Attribution::MissingEnvVar: {
      const harness::ExceptionEvent* exception = step.evidence.exception;
      const std::string raised_in =
          exception && !exception->frames.empty() ? exception->frames.back().file : "";
      return missing_env_var(vars["key"], raised_in, facts, variables);
    }
    case Attribution::None:
      break;
  }
  return std::nullopt;
}

std::string default_message(const RuleConditions& when, const Vars& vars, const FailedStep& step) {
  const std::string& type = vars.at("type");
  if (when.about_exception() && !type.empty()) {
    const std::string& message = vars.at("message");
    return message.empty() ? type : type + ": " + message;
  }
  if (when.about_output() && !vars.at("line").empty()) return vars.at("line");
  const std::string what = step.evidence.setup ? "the setup step" : "the job";
  if (step.evidence.signal != 0) return what + " was killed by " + vars.at("signal");
  return what + " exited with status " + vars.at("exit_code");
}

// A place named by the rule's captures ({{file}} and {{line}}, as a SyntaxError gives it),
// else the innermost frame in the user's code.
SourceLocation location(const Vars& vars, const FailedStep& step, const model::PlatformFacts& facts) {
  SourceLocation where;
  const harness::ExceptionEvent* exception = step.evidence.exception;
  auto file = vars.find("file");
  auto line = vars.find("line_number");
  if (file != vars.end() && !file->second.empty()) {
    std::string named = file->second;
    // Python names the file of a SyntaxError by its base name: find its full path.
    if (named.find('/') == std::string::npos && exception) {
      for (const harness::Frame& frame : exception->frames) {
        if (frame.file.size() > named.size() &&
            frame.file.compare(frame.file.size() - named.size() - 1, std::string::npos, "/" + named) == 0) {
          named = frame.file;
        }
      }
    }
    where.file = relative_to(named, facts.code_container_dir);
    if (line != vars.end() && !line->second.empty()) where.line = std::atoi(line->second.c_str());
    return where;
  }
  if (!exception) {
    // Killed without an exception (OOM, signal, timeout): the last place the job was seen.
    if (step.last_seen) {
      where.file = relative_to(step.last_seen->file, facts.code_container_dir);
      where.line = step.last_seen->line;
    }
    return where;
  }
  for (auto frame = exception->frames.rbegin(); frame != exception->frames.rend(); ++frame) {
    if (!frame->user) continue;
    where.file = relative_to(frame->file, facts.code_container_dir);
    where.line = frame->line;
    break;
  }
  return where;
}

// The package a library file belongs to: "torch" for .../dist-packages/torch/..., "Python's
// standard library" for /usr/lib/python3.11/...; empty when neither.
std::string package_of(const std::string& file) {
  for (const std::string marker : {"/dist-packages/", "/site-packages/"}) {
    const auto at = file.find(marker);
    if (at == std::string::npos) continue;
    const auto start = at + marker.size();
    std::string name = file.substr(start, file.find('/', start) - start);
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".py") == 0) name.resize(name.size() - 3);
    return name;
  }
  return file.rfind("/usr/lib/python", 0) == 0 || file.rfind("/usr/local/lib/python", 0) == 0
             ? "Python's standard library"
             : "";
}

// An exception whose traceback holds no frame of the job's code (a launcher such as torchrun,
// `python -m pkg`) is located at its innermost frame, and says that the library itself failed.
void note_library_only(model::Finding& finding, const FailedStep& step, const model::RunOutcome& outcome) {
  if (!step.exception || step.exception->frames.empty() || step.exception->user_frame()) return;
  const harness::Frame& inner = step.exception->frames.back();
  finding.location = {inner.file, inner.line, 0};
  const std::string package = package_of(inner.file);
  if (package.empty()) return;
  const std::string python =
      outcome.events.python_version.empty() ? "" : " and Python " + outcome.events.python_version;
  finding.message += fmt::format(" — raised inside {} with no frame of the job's code on the stack", package);
  finding.hint += fmt::format(
      " None of the job's code is on the stack: {} itself failed as the image installs it. Check that the "
      "image's "
      "{}{} work together, and how the command starts it.",
      package, package, python);
}

}  // namespace

std::string render(const std::string& text, const std::map<std::string, std::string>& vars) {
  std::string out;
  std::size_t from = 0;
  while (true) {
    const std::size_t open = text.find("{{", from);
    const std::size_t close = open == std::string::npos ? open : text.find("}}", open + 2);
    if (close == std::string::npos) break;
    std::string name = text.substr(open + 2, close - open - 2);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    auto value = vars.find(name);
    const bool literal = (open > 0 && text[open - 1] == '$') || value == vars.end();
    out.append(text, from, open - from);
    out += literal ? text.substr(open, close + 2 - open) : value->second;
    from = close + 2;
  }
  out.append(text, from, std::string::npos);
  return out;
}

model::Finding compose_finding(const Policies& policies, const FailureRule& rule, const RuleMatch& match,
                               const FailedStep& step, const model::RunOutcome& outcome,
                               const model::PlatformFacts& facts) {
  const FailureRules& rules = policies.failures;
  Vars vars = variables(match, step, outcome, facts);
  model::Finding finding;
  finding.rule = rule.id;
  finding.category = rule.category;
  if (const model::Category* category = rules.find_category(rule.category)) {
    finding.dimension = category->dimension;
  }
  finding.root_cause = rule.root_cause;
  finding.severity = rule.severity;
  finding.phase = model::Phase::Dryrun;
  finding.stage = step.stage;
  finding.retry = rule.retry;
  finding.message =
      rule.message.empty() ? default_message(rule.when, vars, step) : render(rule.message, vars);
  finding.hint = render(rule.hint, vars);
  if (auto difference = attribute(rule.attribution, vars, step, facts, policies.variables)) {
    finding.message += " — " + difference->note;
    finding.hint = difference->hint;
  }
  finding.location = location(vars, step, facts);
  note_library_only(finding, step, outcome);
  return finding;
}

model::Finding unmatched_finding(const FailureRules& rules, const FailedStep& step) {
  model::Finding finding;
  finding.rule = "unmatched";
  finding.severity = model::Severity::Error;
  finding.phase = model::Phase::Dryrun;
  finding.stage = step.stage;
  finding.retry = model::Retry::MayHelp;
  finding.message =
      fmt::format("the {} failed (exit status {}) and no rule of {} matched",
                  step.evidence.setup ? "setup step" : "job", step.evidence.exit_code, rules.file().string());
  finding.hint = "add a fallback rule (when: {exit_code: nonzero}) at the end of the rules file";
  return finding;
}

}  // namespace preflight::diagnosis
