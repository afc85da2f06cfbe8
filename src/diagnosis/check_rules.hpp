// Check rules (policies/rules/checks.yaml, docs/formats.md "Check rules"): the rules whose
// findings Preflight's own code detects — the static checks, the outputs after a run — with
// what each one is. The code builds such a finding with its rule id only; `complete` fills
// in the rest from the table.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "diagnosis/failure_rules.hpp"
#include "model/finding.hpp"
#include "util/error.hpp"

namespace preflight::diagnosis {

struct CheckRule {
  std::string id;          // "path-not-on-platform"
  std::string category;    // the category's name, as findings carry it: "Path Not Found"
  std::string dimension;   // the category's
  std::string root_cause;  // one of kRootCauses
  model::Phase phase = model::Phase::Static;
  std::string stage;    // every finding's stage; empty when the code infers it
  std::string summary;  // one line for `preflight explain`
  SourceLocation where;
};

class CheckRules {
 public:
  // Reads a check rules file against the categories and rules of `failures`; every mistake
  // is a bad_input error at its file:line:column.
  static Result<CheckRules> load(const std::filesystem::path& file, const FailureRules& failures);
  static Result<CheckRules> parse(const std::string& text, const std::filesystem::path& file,
                                  const FailureRules& failures);

  const std::vector<CheckRule>& rules() const { return rules_; }
  const std::filesystem::path& file() const { return file_; }
  const CheckRule* find(std::string_view id) const;

  // Fills each finding that has no category yet (one the code built) from its rule's row:
  // category, dimension, root cause, phase, and the stage where the row fixes one.
  // load_policies has made sure the table holds each id of kEmittedCheckRules; a rule id
  // missing from it is a bug of Preflight's: std::logic_error.
  void complete(std::vector<model::Finding>& findings) const;
  void complete(model::Finding& finding) const;

 private:
  std::filesystem::path file_;
  std::vector<CheckRule> rules_;
  friend class CheckRulesReader;
};

}  // namespace preflight::diagnosis
