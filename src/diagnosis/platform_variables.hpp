// Environment variables that mean the same thing on different platforms
// (policies/rules/platform_variables.yaml): the hint for a variable a platform does not set
// names the one it sets instead, e.g. SLURM_PROCID for a torchrun script's RANK on Slurm.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "spec/yaml_doc.hpp"
#include "util/error.hpp"

namespace preflight::diagnosis {

// Names that mean one thing; a name may hold one `*` standing for any text.
struct VariableGroup {
  std::string meaning;  // "the process's global rank"
  std::vector<std::string> names;
};

// What this platform sets in place of a variable it lacks.
struct EquivalentVariable {
  std::string name;     // as the platform sets it: "SLURM_PROCID", "AZURE_ML_OUTPUT_model"
  std::string meaning;  // of the group both belong to
};

class PlatformVariables {
 public:
  static Result<PlatformVariables> load(const std::filesystem::path& file);
  static Result<PlatformVariables> parse(const std::string& text, const std::filesystem::path& file);

  // The first variable of `wanted`'s groups, in the groups' order, that `set` holds.
  std::optional<EquivalentVariable> equivalent(const std::string& wanted,
                                               const std::set<std::string>& set) const;

  const std::vector<VariableGroup>& groups() const { return groups_; }

 private:
  static Result<PlatformVariables> read(const Result<spec::YamlDoc>& doc);
  std::vector<VariableGroup> groups_;
};

// Whether `name` matches `pattern`, in which one `*` stands for any text.
bool variable_matches(const std::string& pattern, const std::string& name);

}  // namespace preflight::diagnosis
