#include "diagnosis/rule_match.hpp"

#include <re2/re2.h>

#include <algorithm>

#include "diagnosis/traceback.hpp"

namespace preflight::diagnosis {

namespace {

std::string_view class_name(std::string_view qualified) {
  const auto dot = qualified.rfind('.');
  return dot == std::string_view::npos ? qualified : qualified.substr(dot + 1);
}

std::string_view top_package(std::string_view qualified) {
  std::string_view top = qualified.substr(0, qualified.find('.'));
  while (!top.empty() && top.front() == '_') top.remove_prefix(1);
  return top;
}

// Searches `text` with `re`; on a match, adds its named groups to `captures`.
bool search(const re2::RE2& re, const std::string& text, std::map<std::string, std::string>& captures) {
  const int groups = re.NumberOfCapturingGroups();
  std::vector<re2::StringPiece> parts(static_cast<std::size_t>(groups) + 1);
  if (!re.Match(text, 0, text.size(), re2::RE2::UNANCHORED, parts.data(), groups + 1)) {
    return false;
  }
  for (const auto& [name, index] : re.NamedCapturingGroups()) {
    const re2::StringPiece& part = parts[static_cast<std::size_t>(index)];
    if (part.data() != nullptr || !captures.count(name)) {
      captures[name] = std::string(part.data() ? part.data() : "", part.size());
    }
  }
  return true;
}

bool exception_holds(const RuleConditions& when, const harness::ExceptionEvent& exception, RuleMatch& match) {
  if (!when.exceptions.empty() &&
      std::none_of(when.exceptions.begin(), when.exceptions.end(),
                   [&](const std::string& name) { return exception_type_matches(name, exception.type); })) {
    return false;
  }
  if (!when.errnos.empty()) {
    const std::optional<int> code =
        exception.errno_value ? exception.errno_value : errno_in(exception.message);
    if (!code || std::find(when.errnos.begin(), when.errnos.end(), *code) == when.errnos.end()) {
      return false;
    }
  }
  if (when.raised_in_user_code) {
    if (exception.frames.empty() || exception.frames.back().user != *when.raised_in_user_code) {
      return false;
    }
  }
  return !when.message || search(*when.message, exception.message, match.captures);
}

bool output_holds(const RuleConditions& when, const StepEvidence& step, RuleMatch& match) {
  if ((when.in == OutputScope::Setup && !step.setup) || (when.in == OutputScope::Command && step.setup)) {
    return false;
  }
  for (auto line = step.lines.rbegin(); line != step.lines.rend(); ++line) {
    std::map<std::string, std::string> captures;
    if (search(*when.output, (*line)->text, captures)) {
      for (auto& [name, value] : captures) match.captures[name] = std::move(value);
      match.line = (*line)->text;
      return true;
    }
  }
  return false;
}

bool contains(const std::vector<int>& values, int value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

}  // namespace

bool exception_type_matches(std::string_view rule_name, std::string_view type) {
  if (rule_name == "*") return !type.empty();
  if (rule_name == type) return true;
  if (class_name(rule_name) != class_name(type)) return false;
  if (rule_name.find('.') == std::string_view::npos) return true;
  return top_package(rule_name) == top_package(type);
}

std::optional<RuleMatch> match_rule(const RuleConditions& when, const StepEvidence& step) {
  RuleMatch match;
  if (when.timed_out && *when.timed_out != step.timed_out) return std::nullopt;
  if (when.oom_killed && *when.oom_killed != step.oom_killed) return std::nullopt;
  if (when.disk_full && *when.disk_full != step.disk_full) return std::nullopt;
  if (!when.signals.empty() && !contains(when.signals, step.signal)) return std::nullopt;
  if (!when.exit_codes.empty() && !contains(when.exit_codes, step.exit_code)) return std::nullopt;
  if (when.nonzero_exit && step.exit_code == 0 && step.signal == 0) return std::nullopt;
  if (when.about_exception() && (!step.exception || !exception_holds(when, *step.exception, match))) {
    return std::nullopt;
  }
  if (when.output && !output_holds(when, step, match)) return std::nullopt;
  return match;
}

}  // namespace preflight::diagnosis
