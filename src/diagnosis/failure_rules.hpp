// Failure rules (policies/rules/failures.yaml, docs/diagnosis.md): the category table of the
// ICSE 2020 taxonomy (plus any categories the file adds) and the ordered rules that map what
// a dry run left behind — an exception, an output line, how the job ended — to a category.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/category.hpp"
#include "model/finding.hpp"
#include "util/error.hpp"

namespace re2 {
class RE2;
}

namespace preflight::diagnosis {

// The four dimensions and five root causes of the study; a rules file may not add others.
extern const std::vector<std::string> kDimensions;
extern const std::vector<std::string> kRootCauses;
// The 20 categories of the study; the shipped rules file describes each of them.
extern const std::vector<std::string> kStudyCategories;

// Where output-line patterns look: the lines of the step that failed, if it is this step.
enum class OutputScope { Any, Setup, Command };

// Which environment difference a rule's finding is checked for (attribution.hpp).
enum class Attribution { None, MissingPath, MissingModule, WriteDenied, MissingEnvVar };

// The `when` of a rule: every condition given must hold; a list holds when any item does.
struct RuleConditions {
  std::vector<std::string> exceptions;      // type names; "*" is any exception
  std::shared_ptr<const re2::RE2> message;  // searched in the exception message
  std::vector<int> errnos;
  std::shared_ptr<const re2::RE2> output;  // searched in each output line
  OutputScope in = OutputScope::Any;
  std::vector<int> exit_codes;  // of the failing step
  bool nonzero_exit = false;    // exit_code: nonzero
  std::vector<int> signals;
  std::optional<bool> oom_killed;
  std::optional<bool> timed_out;
  std::optional<bool> disk_full;
  std::optional<bool> raised_in_user_code;  // raised_in: user | library

  bool about_exception() const {
    return !exceptions.empty() || message || !errnos.empty() || raised_in_user_code;
  }
  bool any_exception() const;  // exceptions holds "*" and no other exception condition
  bool about_output() const { return output != nullptr; }
  bool about_end() const {
    return oom_killed.value_or(false) || timed_out.value_or(false) || disk_full.value_or(false);
  }
};

struct FailureRule {
  std::string id;          // "path-not-found"
  std::string category;    // a category of the table
  std::string root_cause;  // one of kRootCauses
  model::Severity severity = model::Severity::Error;
  model::Retry retry = model::Retry::Useless;
  std::string message;  // template; empty: the matched exception or line
  std::string hint;     // template
  Attribution attribution = Attribution::None;
  RuleConditions when;
  SourceLocation where;
};

class FailureRules {
 public:
  // Reads a rules file; every mistake is a bad_input error at its file:line:column.
  static Result<FailureRules> load(const std::filesystem::path& file);
  static Result<FailureRules> parse(const std::string& text, const std::filesystem::path& file);

  const std::vector<model::Category>& categories() const { return categories_; }
  const std::vector<FailureRule>& rules() const { return rules_; }
  const std::filesystem::path& file() const { return file_; }

  // By name or id, ignoring case, spaces, '-', '_' and '/': "path-not-found",
  // "Path Not Found" and "PATH_NOT_FOUND" are the same category.
  const model::Category* find_category(std::string_view name_or_id) const;
  // The rule with this id, or nullptr.
  const FailureRule* find_rule(std::string_view id) const;
  // The rules that classify into `category` (by exact name), in file order.
  std::vector<const FailureRule*> rules_for(const std::string& category) const;

 private:
  std::filesystem::path file_;
  std::vector<model::Category> categories_;
  std::vector<FailureRule> rules_;
  friend class FailureRulesReader;
};

// 7 → "SIGBUS"; "signal 99" for one without a name here.
std::string signal_name(int signal);

}  // namespace preflight::diagnosis
