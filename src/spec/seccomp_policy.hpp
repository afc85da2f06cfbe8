// A seccomp policy (policies/seccomp/NAME.yaml, docs/formats.md "Seccomp policies"): the
// system calls a platform refuses to its jobs, and the error each refused call returns. A
// profile names one (`seccomp: default`); only the shipped files are policies, so a profile
// from a stranger can pick among them but not write its own.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace preflight::spec {

// One rule: these calls fail with `errno_value`; with `flags_arg`, only when the call's
// argument of that index has any bit of `any_flag` set (clone's CLONE_NEW* flags).
struct SeccompRule {
  std::vector<std::string> syscalls;
  int errno_value = 1;  // EPERM
  std::optional<unsigned> flags_arg;
  std::uint64_t any_flag = 0;
};

struct SeccompPolicy {
  std::string name;  // the file's stem
  std::string description;
  std::vector<SeccompRule> rules;
};

// The folder of shipped policies (policies/seccomp).
std::filesystem::path shipped_seccomp_dir();

// The shipped policy NAME; an unknown name is an error listing the shipped ones.
Result<SeccompPolicy> load_seccomp_policy(const std::string& name, const std::filesystem::path& dir);

// Names of the shipped policies, sorted.
std::vector<std::string> list_seccomp_policies(const std::filesystem::path& dir);

}  // namespace preflight::spec
