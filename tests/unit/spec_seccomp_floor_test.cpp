// The floor of every run (policies/seccomp/default.yaml) against Docker's default profile
// (tests/seccomp/docker.yaml, restated from moby/profiles): each is turned into the filter runc
// gets and asked about every x86-64 system call, with arguments that probe each condition, and
// about every socket family. Whatever Docker refuses, the floor refuses with the same error;
// docs/security.md "The sandbox floor" lists the two side by side.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <optional>
#include <regex>
#include <set>

#include "sandbox/oci_config.hpp"
#include "spec/seccomp_policy.hpp"
#include "test_support.hpp"

namespace preflight::spec {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The x86-64 system call table of the kernel headers here; empty when they are not installed.
std::set<std::string> kernel_syscalls() {
  std::set<std::string> names;
  for (const char* header :
       {"/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"}) {
    std::ifstream in(header);
    const std::regex define(R"(^#define __NR_(\w+) \d+)");
    std::smatch match;
    for (std::string line; std::getline(in, line);)
      if (std::regex_search(line, match, define)) names.insert(match[1]);
    if (!names.empty()) break;
  }
  return names;
}

// The filter runc would get for the policy.
json filter_of(const SeccompPolicy& policy) {
  plan::RunPlan plan;
  plan.seccomp = policy;
  return sandbox::make_oci_config(plan, "/r", std::nullopt)["linux"]["seccomp"];
}

bool holds(const json& test, std::uint64_t arg) {
  const auto value = test["value"].get<std::uint64_t>();
  if (test["op"] == "SCMP_CMP_EQ") return arg == value;
  if (test["op"] == "SCMP_CMP_MASKED_EQ") return (arg & value) == test["valueTwo"].get<std::uint64_t>();
  ADD_FAILURE() << "no evaluation for " << test.dump();
  return false;
}

// The error the filter answers `call` with, its first argument `arg`; nullopt: allowed. A call
// that both an allow rule and an error rule match would leave the answer to libseccomp's order:
// neither policy may have one.
std::optional<int> answer(const json& filter, const std::string& call, std::uint64_t arg) {
  std::set<std::string> actions;
  std::optional<int> error;
  for (const json& rule : filter["syscalls"]) {
    const auto& names = rule["names"];
    if (std::find(names.begin(), names.end(), call) == names.end()) continue;
    bool matched = true;
    for (const json& test : rule.value("args", json::array())) {
      EXPECT_EQ(test["index"], 0) << call << ": the probes vary the first argument only";
      matched = matched && holds(test, arg);
    }
    if (!matched) continue;
    actions.insert(rule["action"].get<std::string>());
    if (rule["action"] == "SCMP_ACT_ERRNO") error = rule["errnoRet"].get<int>();
  }
  EXPECT_LE(actions.size(), 1u) << call << "(" << arg << ") is both allowed and refused";
  if (!actions.empty()) return error;
  if (filter["defaultAction"] == "SCMP_ACT_ALLOW") return std::nullopt;
  return filter["defaultErrnoRet"].get<int>();
}

// First arguments that tell every condition's cases apart: small numbers (socket families,
// personalities), each single bit (clone flags), and every value and mask either filter names.
std::set<std::uint64_t> probes(const json& a, const json& b) {
  std::set<std::uint64_t> values = {0xffffffff, ~0ull};
  for (std::uint64_t n = 0; n <= 64; ++n) values.insert(n);
  for (int bit = 0; bit < 64; ++bit) values.insert(1ull << bit);
  for (const json* filter : {&a, &b})
    for (const json& rule : (*filter)["syscalls"])
      for (const json& test : rule.value("args", json::array()))
        values.insert(test["value"].get<std::uint64_t>());
  return values;
}

std::set<std::string> names_in(const json& filter) {
  std::set<std::string> names;
  for (const json& rule : filter["syscalls"])
    for (const json& name : rule["names"]) names.insert(name.get<std::string>());
  return names;
}

struct Filters {
  json ours, docker;
};

Filters load_both() {
  auto shipped =
      load_seccomp_policy(kFloorSeccompPolicy, preflight::testing::source_dir() / "policies" / "seccomp");
  auto docker = load_seccomp_policy("docker", preflight::testing::source_dir() / "tests" / "seccomp");
  EXPECT_TRUE(shipped.ok()) << shipped.error().str();
  EXPECT_TRUE(docker.ok()) << docker.error().str();
  if (!shipped || !docker) return {};
  return {filter_of(*shipped), filter_of(*docker)};
}

std::string shown(const std::optional<int>& error) {
  return error ? "refused with errno " + std::to_string(*error) : "allowed";
}

TEST(SpecSeccompFloor, TheFloorRefusesEveryCallDockersDefaultProfileRefuses) {
  std::set<std::string> calls = kernel_syscalls();
  if (calls.empty())
    GTEST_SKIP() << "no x86-64 kernel headers (asm/unistd_64.h) to take the system calls from";
  const auto [ours, docker] = load_both();
  ASSERT_FALSE(ours.is_null());
  // The kernel's table, and the calls either profile names that are newer than these headers.
  for (const json* filter : {&ours, &docker})
    for (const std::string& name : names_in(*filter)) calls.insert(name);
  const std::set<std::uint64_t> args = probes(ours, docker);
  int refused_by_docker = 0;
  for (const std::string& call : calls) {
    for (const std::uint64_t arg : args) {
      const auto theirs = answer(docker, call, arg);
      const auto floor_answer = answer(ours, call, arg);
      if (!theirs) continue;
      ++refused_by_docker;
      // Refused as Docker refuses it, so that a job fails here with the error it gets there.
      ASSERT_EQ(floor_answer, theirs) << call << "(" << arg << "): Docker's default profile answers "
                                      << shown(theirs) << ", the floor " << shown(floor_answer);
    }
  }
  // The comparison covered Docker's refusals: the namespaces' calls and dozens of others.
  EXPECT_GT(refused_by_docker, 1000);
}

TEST(SpecSeccompFloor, TheFloorAllowsWhatDockerAllowsSoThatJobsRunAsThere) {
  std::set<std::string> calls = kernel_syscalls();
  if (calls.empty())
    GTEST_SKIP() << "no x86-64 kernel headers (asm/unistd_64.h) to take the system calls from";
  const auto [ours, docker] = load_both();
  ASSERT_FALSE(ours.is_null());
  const std::set<std::uint64_t> args = probes(ours, docker);
  for (const std::string& call : calls) {
    for (const std::uint64_t arg : args) {
      if (answer(docker, call, arg)) continue;
      EXPECT_EQ(answer(ours, call, arg), std::nullopt) << call << "(" << arg << ")";
    }
  }
}

TEST(SpecSeccompFloor, SocketFamiliesAreRefusedFamilyForFamily) {
  const auto [ours, docker] = load_both();
  ASSERT_FALSE(ours.is_null());
  std::vector<std::uint64_t> refused;
  for (std::uint64_t family = 0; family < 256; ++family) {
    const auto theirs = answer(docker, "socket", family);
    EXPECT_EQ(answer(ours, "socket", family), theirs) << "socket family " << family;
    if (theirs) refused.push_back(family);
  }
  // AF_VSOCK (40), which reaches the host across network namespaces, and AF_ALG (38) among them.
  for (const std::uint64_t family : {0u, 38u, 40u, 46u})
    EXPECT_EQ(answer(ours, "socket", family), EPERM) << family;
  for (const std::uint64_t family : {1u, 2u, 10u, 16u})
    EXPECT_EQ(answer(ours, "socket", family), std::nullopt);
  EXPECT_EQ(refused.front(), 0u);
  EXPECT_EQ(std::count(refused.begin(), refused.end(), 40u), 1);
}

TEST(SpecSeccompFloor, TheCallsTheProbeReachedUnderUnconfinedAreRefused) {
  const auto [ours, docker] = load_both();
  ASSERT_FALSE(ours.is_null());
  constexpr std::uint64_t kCloneNewUser = 0x10000000;
  EXPECT_EQ(answer(ours, "unshare", kCloneNewUser), EPERM);
  EXPECT_EQ(answer(ours, "clone", kCloneNewUser | 17), EPERM);
  EXPECT_EQ(answer(ours, "clone", 17), std::nullopt);  // fork: SIGCHLD alone
  for (const char* call : {"keyctl", "io_uring_setup", "chroot", "mount", "setns"})
    EXPECT_EQ(answer(ours, call, 0), EPERM) << call;
  EXPECT_EQ(answer(ours, "clone3", 0), ENOSYS);
  // Stricter than Docker: i386's socketcall carries socket's family in memory, out of the
  // filter's sight, and any process can make it (int 0x80).
  EXPECT_EQ(answer(docker, "socketcall", 1), std::nullopt);
  EXPECT_EQ(answer(ours, "socketcall", 1), EPERM);
}

}  // namespace
}  // namespace preflight::spec
