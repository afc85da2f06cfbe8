#include "diagnosis/policies.hpp"

#include "util/data_dir.hpp"

namespace preflight::diagnosis {

Result<Policies> load_policies(const std::filesystem::path& rules_dir) {
  auto failures = FailureRules::load(rules_dir / "failures.yaml");
  if (!failures) return std::move(failures).error();
  auto variables = PlatformVariables::load(rules_dir / "platform_variables.yaml");
  if (!variables) return std::move(variables).error();
  auto checks = CheckRules::load(rules_dir / "checks.yaml", *failures);
  if (!checks) return std::move(checks).error();
  return Policies{std::move(*failures), std::move(*variables), std::move(*checks)};
}

std::filesystem::path shipped_rules_dir() { return data_dir() / "policies" / "rules"; }

}  // namespace preflight::diagnosis
