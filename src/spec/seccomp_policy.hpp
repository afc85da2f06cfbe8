// A seccomp policy (policies/seccomp/NAME.yaml, docs/formats.md "Seccomp policies"): the
// system calls a sandbox lets its job make, and the error each refused call returns. Every
// run's floor is `default` (docs/security.md "The sandbox floor"); only the user on the
// command line picks another, among the shipped files, so a job or a profile from a stranger
// cannot weaken it. A profile's `seccomp:` names what its platform applies, for the report.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace preflight::spec {

// The policy every run keeps unless the user lowers it on the command line.
inline constexpr const char* kFloorSeccompPolicy = "default";

// When a rule applies, by one argument of the call: any bit of `mask` set (clone's CLONE_NEW*
// flags), no bit of `mask` set, or the argument equal to one of `values` (socket's families).
struct SeccompCondition {
  enum class Test { AnyBit, NoBit, OneOf };
  unsigned arg = 0;
  Test test = Test::AnyBit;
  std::uint64_t mask = 0;
  std::vector<std::uint64_t> values;
};

// One rule: these calls are allowed (`allow`), or fail with `errno_value`; with `when`, only
// the calls whose argument passes its test.
struct SeccompRule {
  std::vector<std::string> syscalls;
  bool allow = false;
  int errno_value = 1;  // EPERM
  std::optional<SeccompCondition> when;
};

struct SeccompPolicy {
  std::string name;  // the file's stem
  std::string description;
  // Set: an allow list, and every call no rule allows fails with this error (Docker's form).
  // Unset: every call no rule refuses is allowed.
  std::optional<int> otherwise_errno;
  std::vector<SeccompRule> rules;
};

// The folder of shipped policies (policies/seccomp).
std::filesystem::path shipped_seccomp_dir();

// The shipped policy NAME; an unknown name is an error listing the shipped ones.
Result<SeccompPolicy> load_seccomp_policy(const std::string& name, const std::filesystem::path& dir);

// Names of the shipped policies, sorted.
std::vector<std::string> list_seccomp_policies(const std::filesystem::path& dir);

}  // namespace preflight::spec
