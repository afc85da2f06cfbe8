#include "diagnosis/failure_rules.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <map>
#include <set>

#include "spec/template.hpp"
#include "spec/yaml_doc.hpp"
#include "util/data_dir.hpp"
#include "util/did_you_mean.hpp"

namespace preflight::diagnosis {

const std::vector<std::string> kDimensions = {"Deep Learning Specific", "Execution Environment",
                                              "General Code Error", "Data"};

const std::vector<std::string> kRootCauses = {
    "Environment Difference", "Inappropriate Model Parameter/Structure", "API Misunderstanding",
    "Exceptional Data", "Common Programming Error"};

const std::vector<std::string> kStudyCategories = {
    "GPU Out of Memory",   "CPU Out of Memory",  "Framework API Misuse",
    "Tensor Mismatch",     "Loss NaN",           "Path Not Found",
    "Library Not Found",   "Permission Denied",  "Illegal Argument",
    "Type Mismatch",       "Key Not Found",      "Null Reference",
    "Attribute Not Found", "Syntax Error",       "Illegal Index",
    "Undefined Variable",  "Not Implemented",    "Division by Zero",
    "Corrupt Data",        "Unexpected Encoding"};

namespace {

// Variables every rule's message and hint may use (docs/diagnosis.md); the named groups of
// the rule's own patterns are added per rule.
const std::vector<std::string> kTemplateBuiltins = {
    "type",    "message", "line",     "path",  "errno",  "exit_code", "signal",      "stage",    "why",
    "timeout", "written", "platform", "user",  "uid",    "home",      "image",       "code_dir", "shm",
    "memory",  "disk",    "seccomp",  "input", "output", "set_env",   "command_line"};

using spec::YamlDoc;
using spec::YamlField;

std::string normalized(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

std::optional<int> errno_by_name(const std::string& name) {
  static const std::map<std::string, int> names = {{"EPERM", EPERM},
                                                   {"ENOENT", ENOENT},
                                                   {"EIO", EIO},
                                                   {"EACCES", EACCES},
                                                   {"EEXIST", EEXIST},
                                                   {"ENOTDIR", ENOTDIR},
                                                   {"EISDIR", EISDIR},
                                                   {"EINVAL", EINVAL},
                                                   {"EMFILE", EMFILE},
                                                   {"ENOSPC", ENOSPC},
                                                   {"EROFS", EROFS},
                                                   {"ENOMEM", ENOMEM},
                                                   {"EBUSY", EBUSY},
                                                   {"EXDEV", EXDEV},
                                                   {"ENOTEMPTY", ENOTEMPTY},
                                                   {"ETIMEDOUT", ETIMEDOUT},
                                                   {"ECONNREFUSED", ECONNREFUSED},
                                                   {"ECONNRESET", ECONNRESET},
                                                   {"ENETUNREACH", ENETUNREACH},
                                                   {"EHOSTUNREACH", EHOSTUNREACH},
                                                   {"EAGAIN", EAGAIN},
                                                   {"ENODEV", ENODEV},
                                                   {"ENXIO", ENXIO},
                                                   {"E2BIG", E2BIG},
                                                   {"ENAMETOOLONG", ENAMETOOLONG}};
  auto it = names.find(name);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

const std::map<std::string, int>& signal_names() {
  static const std::map<std::string, int> names = {
      {"SIGHUP", SIGHUP},   {"SIGINT", SIGINT},   {"SIGQUIT", SIGQUIT}, {"SIGILL", SIGILL},
      {"SIGTRAP", SIGTRAP}, {"SIGABRT", SIGABRT}, {"SIGBUS", SIGBUS},   {"SIGFPE", SIGFPE},
      {"SIGKILL", SIGKILL}, {"SIGUSR1", SIGUSR1}, {"SIGSEGV", SIGSEGV}, {"SIGUSR2", SIGUSR2},
      {"SIGPIPE", SIGPIPE}, {"SIGALRM", SIGALRM}, {"SIGTERM", SIGTERM}, {"SIGXCPU", SIGXCPU},
      {"SIGSYS", SIGSYS}};
  return names;
}

std::optional<int> signal_by_name(const std::string& given) {
  const std::string name = given.rfind("SIG", 0) == 0 ? given : "SIG" + given;
  auto it = signal_names().find(name);
  if (it == signal_names().end()) return std::nullopt;
  return it->second;
}

// A scalar or a list of scalars, as a list.
Result<std::vector<std::string>> one_or_more(const YamlDoc& doc, const YamlField& field) {
  if (field.value.IsScalar()) return std::vector<std::string>{field.value.Scalar()};
  return doc.string_list(field);
}

// Reads a list of numbers or symbolic names ("EACCES", "SIGBUS") into numbers.
Result<std::vector<int>> codes(const YamlDoc& doc, const YamlField& field,
                               std::optional<int> (*by_name)(const std::string&), const char* what) {
  auto items = one_or_more(doc, field);
  if (!items) return std::move(items).error();
  std::vector<int> out;
  for (const std::string& item : *items) {
    if (!item.empty() && std::all_of(item.begin(), item.end(),
                                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      out.push_back(std::stoi(item));
    } else if (auto code = by_name(item)) {
      out.push_back(*code);
    } else {
      return doc.error(field, "unknown " + std::string(what) + " \"" + item + "\"");
    }
  }
  return out;
}

Result<std::shared_ptr<const re2::RE2>> pattern(const YamlDoc& doc, const YamlField& field) {
  auto text = doc.string(field);
  if (!text) return std::move(text).error();
  re2::RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_shared<const re2::RE2>(*text, options);
  if (!re->ok()) return doc.error(field, "invalid regular expression: " + re->error());
  return std::shared_ptr<const re2::RE2>(re);
}

}  // namespace

bool RuleConditions::any_exception() const {
  return std::find(exceptions.begin(), exceptions.end(), "*") != exceptions.end() && !message &&
         errnos.empty() && !raised_in_user_code;
}

std::string signal_name(int signal) {
  for (const auto& [name, number] : signal_names()) {
    if (number == signal) return name;
  }
  return "signal " + std::to_string(signal);
}

// Builds FailureRules from a parsed document, one section at a time.
class FailureRulesReader {
 public:
  explicit FailureRulesReader(const YamlDoc& doc) : doc_(doc) {}

  Result<FailureRules> read() {
    rules_.file_ = doc_.file();
    auto top = doc_.fields(doc_.root(), "", {"categories", "rules"});
    if (!top) return std::move(top).error();
    // Categories first, wherever they are in the file: rules refer to them.
    for (const char* section : {"categories", "rules"}) {
      for (const YamlField& field : *top) {
        if (field.key != section) continue;
        Status done = field.key == "categories" ? read_categories(field) : read_rules(field);
        if (!done) return std::move(done).error();
      }
    }
    return std::move(rules_);
  }

 private:
  Status read_categories(const YamlField& section) {
    auto entries = doc_.fields(section, {});
    if (!entries) return std::move(entries).error();
    for (const YamlField& entry : *entries) {
      model::Category category;
      category.name = entry.key;
      category.id = model::category_id(entry.key);
      category.where = doc_.at(entry.key_node);
      if (rules_.find_category(category.name)) {
        return Error::bad_input("category \"" + entry.key + "\" is given twice", category.where);
      }
      auto fields = doc_.fields(entry, {"dimension", "description", "fix"});
      if (!fields) return std::move(fields).error();
      for (const YamlField& field : *fields) {
        Result<std::string> value =
            field.key == "dimension" ? doc_.one_of(field, kDimensions, "dimension") : doc_.string(field);
        if (!value) return std::move(value).error();
        (field.key == "dimension"     ? category.dimension
         : field.key == "description" ? category.description
                                      : category.fix) = *value;
      }
      if (category.dimension.empty()) {
        return Error::bad_input(entry.path + ": missing \"dimension\"", category.where);
      }
      rules_.categories_.push_back(std::move(category));
    }
    return Ok{};
  }

  Status read_rules(const YamlField& section) {
    if (!section.value.IsSequence()) {
      return doc_.error(section, "expected a list of rules, got " + spec::describe(section.value));
    }
    for (std::size_t i = 0; i < section.value.size(); ++i) {
      const YAML::Node node = section.value[i];
      auto rule = read_rule(node, "rules[" + std::to_string(i) + "]");
      if (!rule) return std::move(rule).error();
      rules_.rules_.push_back(std::move(*rule));
    }
    return Ok{};
  }

  Result<FailureRule> read_rule(const YAML::Node& node, const std::string& path) {
    auto fields = doc_.fields(
        node, path,
        {"id", "category", "root_cause", "severity", "retry", "attribution", "message", "hint", "when"});
    if (!fields) return std::move(fields).error();
    FailureRule rule;
    rule.where = doc_.at(node);
    const YamlField* when = nullptr;
    const YamlField* message = nullptr;
    const YamlField* hint = nullptr;
    for (const YamlField& field : *fields) {
      Status done = Ok{};
      if (field.key == "when") {
        when = &field;
      } else if (field.key == "message") {
        message = &field;
      } else if (field.key == "hint") {
        hint = &field;
      } else {
        done = read_rule_field(field, rule);
      }
      if (!done) return std::move(done).error();
    }
    for (const char* required : {"id", "category", "root_cause", "when"}) {
      bool given =
          std::any_of(fields->begin(), fields->end(), [&](const YamlField& f) { return f.key == required; });
      if (!given) {
        return Error::bad_input(path + ": missing \"" + std::string(required) + "\"", rule.where);
      }
    }
    if (auto conditions = read_when(*when)) {
      rule.when = std::move(*conditions);
    } else {
      return std::move(conditions).error();
    }
    for (const YamlField* text : {message, hint}) {
      if (!text) continue;
      auto value = template_text(*text, rule);
      if (!value) return std::move(value).error();
      (text == message ? rule.message : rule.hint) = *value;
    }
    return rule;
  }

  Status read_rule_field(const YamlField& field, FailureRule& rule) {
    if (field.key == "id") {
      auto id = doc_.string(field);
      if (!id) return std::move(id).error();
      if (id->empty() || model::category_id(*id) != *id) {
        return doc_.error(
            field, "a rule id is lowercase words joined by '-', like \"" + model::category_id(*id) + "\"");
      }
      if (const FailureRule* other = rules_.find_rule(*id)) {
        return doc_.error(
            field, "rule id \"" + *id + "\" is already used on line " + std::to_string(other->where.line));
      }
      rule.id = *id;
    } else if (field.key == "category") {
      std::vector<std::string> names;
      for (const model::Category& category : rules_.categories_) names.push_back(category.name);
      auto name = doc_.one_of(field, names, "category");
      if (!name) {
        Error error = std::move(name).error();
        error.message += " (a rule's category must be declared under \"categories:\")";
        return error;
      }
      rule.category = *name;
    } else if (field.key == "root_cause") {
      auto cause = doc_.one_of(field, kRootCauses, "root cause");
      if (!cause) return std::move(cause).error();
      rule.root_cause = *cause;
    } else if (field.key == "severity") {
      auto severity = doc_.choice<model::Severity>(field, {{"error", model::Severity::Error},
                                                           {"warning", model::Severity::Warning},
                                                           {"info", model::Severity::Info}});
      if (!severity) return std::move(severity).error();
      rule.severity = *severity;
    } else if (field.key == "retry") {
      auto retry = doc_.choice<model::Retry>(
          field, {{"useless", model::Retry::Useless}, {"may_help", model::Retry::MayHelp}});
      if (!retry) return std::move(retry).error();
      rule.retry = *retry;
    } else if (field.key == "attribution") {
      auto kind = doc_.choice<Attribution>(field, {{"none", Attribution::None},
                                                   {"missing-path", Attribution::MissingPath},
                                                   {"missing-module", Attribution::MissingModule},
                                                   {"write-denied", Attribution::WriteDenied},
                                                   {"missing-env-var", Attribution::MissingEnvVar}});
      if (!kind) return std::move(kind).error();
      rule.attribution = *kind;
    }
    return Ok{};
  }

  Result<RuleConditions> read_when(const YamlField& when) {
    auto fields = doc_.fields(when, {"exception", "message", "errno", "output", "in", "exit_code", "signal",
                                     "oom_killed", "timed_out", "disk_full", "raised_in"});
    if (!fields) return std::move(fields).error();
    if (fields->empty()) return doc_.error(when, "a rule needs at least one condition");
    RuleConditions out;
    const YamlField* in = nullptr;
    for (const YamlField& field : *fields) {
      Status done = read_condition(field, out);
      if (!done) return std::move(done).error();
      if (field.key == "in") in = &field;
    }
    if (in && !out.output) return doc_.error(*in, "\"in\" applies to \"output\", which is missing");
    return out;
  }

  Status read_condition(const YamlField& field, RuleConditions& out) {
    const std::string& key = field.key;
    if (key == "exception") {
      auto names = one_or_more(doc_, field);
      if (!names) return std::move(names).error();
      out.exceptions = std::move(*names);
    } else if (key == "message" || key == "output") {
      auto re = pattern(doc_, field);
      if (!re) return std::move(re).error();
      (key == "message" ? out.message : out.output) = std::move(*re);
    } else if (key == "errno") {
      auto list = codes(doc_, field, &errno_by_name, "errno");
      if (!list) return std::move(list).error();
      out.errnos = std::move(*list);
    } else if (key == "signal") {
      auto list = codes(doc_, field, &signal_by_name, "signal");
      if (!list) return std::move(list).error();
      out.signals = std::move(*list);
    } else if (key == "exit_code") {
      if (field.value.IsScalar() && field.value.Scalar() == "nonzero") {
        out.nonzero_exit = true;
        return Ok{};
      }
      auto list = codes(
          doc_, field, [](const std::string&) -> std::optional<int> { return {}; },
          "exit code (a number or \"nonzero\")");
      if (!list) return std::move(list).error();
      out.exit_codes = std::move(*list);
    } else if (key == "in") {
      auto scope = doc_.choice<OutputScope>(
          field,
          {{"any", OutputScope::Any}, {"setup", OutputScope::Setup}, {"command", OutputScope::Command}});
      if (!scope) return std::move(scope).error();
      out.in = *scope;
    } else if (key == "raised_in") {
      auto user = doc_.choice<bool>(field, {{"user", true}, {"library", false}});
      if (!user) return std::move(user).error();
      out.raised_in_user_code = *user;
    } else {
      auto flag = doc_.boolean(field);
      if (!flag) return std::move(flag).error();
      (key == "oom_killed" ? out.oom_killed : key == "timed_out" ? out.timed_out : out.disk_full) = *flag;
    }
    return Ok{};
  }

  // A message or hint: every {{variable}} must be a builtin or a named group of the rule's
  // patterns; "${{...}}" is job.yaml syntax shown to the user and left alone.
  Result<std::string> template_text(const YamlField& field, const FailureRule& rule) {
    auto text = doc_.string(field);
    if (!text) return std::move(text).error();
    bool exact = false;
    const SourceLocation where = doc_.text_at(field.value, &exact);
    auto variables = spec::template_variables(*text, where);
    if (!variables) return std::move(variables).error();
    std::vector<std::string> known = kTemplateBuiltins;
    for (const auto* re : {rule.when.message.get(), rule.when.output.get()}) {
      if (!re) continue;
      for (const auto& [name, index] : re->NamedCapturingGroups()) known.push_back(name);
    }
    for (const spec::TemplateVariable& variable : *variables) {
      if (variable.offset > 0 && (*text)[variable.offset - 1] == '$') continue;
      if (std::find(known.begin(), known.end(), variable.name) == known.end()) {
        return Error::bad_input(field.path + ": unknown template variable \"{{" + variable.name + "}}\"" +
                                    did_you_mean(variable.name, known),
                                exact ? spec::location_in(where, *text, variable.offset) : where);
      }
    }
    return *text;
  }

  const YamlDoc& doc_;
  FailureRules rules_;
};

Result<FailureRules> FailureRules::load(const std::filesystem::path& file) {
  auto doc = YamlDoc::load(file);
  if (!doc) return std::move(doc).error();
  return FailureRulesReader(*doc).read();
}

Result<FailureRules> FailureRules::parse(const std::string& text, const std::filesystem::path& file) {
  auto doc = YamlDoc::parse(text, file);
  if (!doc) return std::move(doc).error();
  return FailureRulesReader(*doc).read();
}

const model::Category* FailureRules::find_category(std::string_view name_or_id) const {
  const std::string wanted = normalized(name_or_id);
  for (const model::Category& category : categories_) {
    if (normalized(category.name) == wanted) return &category;
  }
  return nullptr;
}

const FailureRule* FailureRules::find_rule(std::string_view id) const {
  for (const FailureRule& rule : rules_)
    if (rule.id == id) return &rule;
  return nullptr;
}

std::vector<const FailureRule*> FailureRules::rules_for(const std::string& category) const {
  std::vector<const FailureRule*> out;
  for (const FailureRule& rule : rules_) {
    if (rule.category == category) out.push_back(&rule);
  }
  return out;
}

}  // namespace preflight::diagnosis
