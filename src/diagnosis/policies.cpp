#include "diagnosis/policies.hpp"

#include <fmt/format.h>

#include <string_view>

#include "diagnosis/emitted_rules.hpp"
#include "util/data_dir.hpp"

namespace preflight::diagnosis {

namespace {

// Every rule the code emits has its row; else a bad_input error at the table's file.
Status require_emitted_rules(const Policies& policies) {
  for (std::string_view id : kEmittedFailureRules) {
    if (!policies.failures.find_rule(id))
      return Error::bad_input(fmt::format("no rule \"{}\", which Preflight recognises during a run; "
                                          "restore its row from the shipped rules",
                                          id),
                              SourceLocation{policies.failures.file()});
  }
  for (std::string_view id : kEmittedCheckRules) {
    if (!policies.checks.find(id))
      return Error::bad_input(fmt::format("no rule \"{}\", which Preflight's checks emit; "
                                          "restore its row from the shipped rules",
                                          id),
                              SourceLocation{policies.checks.file()});
  }
  return Ok{};
}

}  // namespace

Result<Policies> load_policies(const std::filesystem::path& rules_dir) {
  auto failures = FailureRules::load(rules_dir / "failures.yaml");
  if (!failures) return std::move(failures).error();
  auto variables = PlatformVariables::load(rules_dir / "platform_variables.yaml");
  if (!variables) return std::move(variables).error();
  auto checks = CheckRules::load(rules_dir / "checks.yaml", *failures);
  if (!checks) return std::move(checks).error();
  Policies policies{std::move(*failures), std::move(*variables), std::move(*checks)};
  if (auto complete = require_emitted_rules(policies); !complete) return std::move(complete).error();
  return policies;
}

std::filesystem::path shipped_rules_dir() { return data_dir() / "policies" / "rules"; }

}  // namespace preflight::diagnosis
