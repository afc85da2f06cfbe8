// Everything Preflight reads from policies/rules/: loaded once by a command, then passed down
// to the stages that need it (nothing below reads a rules file on its own).
#pragma once

#include <filesystem>

#include "diagnosis/check_rules.hpp"
#include "diagnosis/failure_rules.hpp"
#include "diagnosis/platform_variables.hpp"
#include "util/error.hpp"

namespace preflight::diagnosis {

struct Policies {
  FailureRules failures;        // failures.yaml: the categories and the rules that classify
  PlatformVariables variables;  // platform_variables.yaml: variables that mean the same thing
  CheckRules checks;            // checks.yaml: what each rule that the code detects is
};

// The files of `rules_dir`; every mistake is a bad_input error at its file:line:column.
Result<Policies> load_policies(const std::filesystem::path& rules_dir);
// policies/rules/ in the data folder.
std::filesystem::path shipped_rules_dir();

}  // namespace preflight::diagnosis
