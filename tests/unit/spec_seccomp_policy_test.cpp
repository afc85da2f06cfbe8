// Seccomp policies (policies/seccomp/): the shipped ones load and refuse what a container
// runtime's default profile refuses; a profile names one; a policy file's mistakes are exit 2
// at their place.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>

#include "spec/platform_profile.hpp"
#include "spec/seccomp_policy.hpp"
#include "test_support.hpp"

namespace preflight::spec {
namespace {

using preflight::testing::TempDir;

std::filesystem::path shipped() { return preflight::testing::source_dir() / "policies" / "seccomp"; }

const SeccompRule* rule_for(const SeccompPolicy& policy, const std::string& syscall) {
  for (const SeccompRule& rule : policy.rules)
    if (std::find(rule.syscalls.begin(), rule.syscalls.end(), syscall) != rule.syscalls.end()) return &rule;
  return nullptr;
}

TEST(SpecSeccomp, TheDefaultPolicyAllowsAListAndRefusesTheRest) {
  auto policy = load_seccomp_policy("default", shipped());
  ASSERT_TRUE(policy.ok()) << policy.error().str();
  EXPECT_EQ(policy->otherwise_errno, EPERM);
  // What every job needs is allowed whatever its arguments.
  for (const char* call : {"fork", "vfork", "execve", "mmap", "openat", "futex", "ptrace", "statx"}) {
    const SeccompRule* rule = rule_for(*policy, call);
    ASSERT_NE(rule, nullptr) << call;
    EXPECT_TRUE(rule->allow) << call;
    EXPECT_FALSE(rule->when) << call;
  }
  // What container runtimes refuse is in no rule: it gets the policy's EPERM.
  for (const char* call :
       {"unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "keyctl", "add_key", "bpf",
        "perf_event_open", "userfaultfd", "io_uring_setup", "init_module", "kexec_load", "open_by_handle_at",
        "clock_settime", "reboot", "swapon", "fsopen"})
    EXPECT_EQ(rule_for(*policy, call), nullptr) << call;
  // clone only without a namespace flag; socket by family; clone3, whose flags a filter
  // cannot read, as missing.
  const SeccompRule* clone = rule_for(*policy, "clone");
  ASSERT_NE(clone, nullptr);
  ASSERT_TRUE(clone->when);
  EXPECT_EQ(clone->when->test, SeccompCondition::Test::NoBit);
  EXPECT_EQ(clone->when->mask, 0x7E020000u);
  const SeccompRule* socket = rule_for(*policy, "socket");
  ASSERT_NE(socket, nullptr);
  ASSERT_TRUE(socket->when);
  EXPECT_EQ(socket->when->test, SeccompCondition::Test::OneOf);
  EXPECT_EQ(std::count(socket->when->values.begin(), socket->when->values.end(), 40u), 0);  // AF_VSOCK
  EXPECT_EQ(std::count(socket->when->values.begin(), socket->when->values.end(), 2u), 1);   // AF_INET
  ASSERT_NE(rule_for(*policy, "clone3"), nullptr);
  EXPECT_FALSE(rule_for(*policy, "clone3")->allow);
  EXPECT_EQ(rule_for(*policy, "clone3")->errno_value, ENOSYS);
}

TEST(SpecSeccomp, UnconfinedLeavesNamespacesToTheJob) {
  auto policy = load_seccomp_policy("unconfined", shipped());
  ASSERT_TRUE(policy.ok()) << policy.error().str();
  for (const char* call : {"unshare", "clone", "clone3", "keyctl", "perf_event_open", "mount"})
    EXPECT_EQ(rule_for(*policy, call), nullptr) << call;
  EXPECT_NE(rule_for(*policy, "init_module"), nullptr);
  EXPECT_NE(rule_for(*policy, "kexec_load"), nullptr);
}

TEST(SpecSeccomp, AProfileNamesAShippedPolicyAndGetsTheDefaultOtherwise) {
  const auto platforms = preflight::testing::source_dir() / "policies" / "platforms";
  auto philly = load_platform("philly", platforms);
  ASSERT_TRUE(philly.ok()) << philly.error().str();
  EXPECT_EQ(philly->seccomp.name, "default");
  auto slurm = load_platform("slurm", platforms);
  ASSERT_TRUE(slurm.ok()) << slurm.error().str();
  EXPECT_EQ(slurm->seccomp.name, "unconfined");

  TempDir dir;
  auto unsaid = load_platform(dir.write("p.yaml", "name: p\n").string(), platforms);
  ASSERT_TRUE(unsaid.ok()) << unsaid.error().str();
  EXPECT_EQ(unsaid->seccomp.name, "default");
  EXPECT_FALSE(unsaid->seccomp.rules.empty());

  // A profile picks among the shipped policies; it cannot name a file of its own.
  for (const char* name : {"defualt", "../p", "/etc/passwd"}) {
    auto profile =
        load_platform(dir.write("p.yaml", std::string("seccomp: \"") + name + "\"\n").string(), platforms);
    ASSERT_FALSE(profile.ok()) << name;
    EXPECT_EQ(profile.error().exit_status(), 2);
    EXPECT_EQ(profile.error().where.line, 1);
    EXPECT_EQ(profile.error().where.column, 10);
    EXPECT_NE(profile.error().message.find(std::string("seccomp: unknown seccomp policy \"") + name + "\""),
              std::string::npos)
        << profile.error().message;
    EXPECT_NE(profile.error().message.find("default, unconfined"), std::string::npos)
        << profile.error().message;
  }
  auto misspelt = load_platform(dir.write("p.yaml", "seccomp: defualt\n").string(), platforms);
  ASSERT_FALSE(misspelt.ok());
  EXPECT_NE(misspelt.error().message.find("did you mean \"default\"?"), std::string::npos);
}

TEST(SpecSeccomp, APolicyFilesMistakesAreErrorsAtTheirPlace) {
  TempDir dir;
  auto load = [&](const std::string& yaml) {
    dir.write("p.yaml", yaml);
    return load_seccomp_policy("p", dir.path());
  };
  auto expect_error = [](const Result<SeccompPolicy>& policy, int line, int column,
                         const std::string& message) {
    ASSERT_FALSE(policy.ok());
    EXPECT_EQ(policy.error().exit_status(), 2);
    EXPECT_EQ(policy.error().where.line, line) << policy.error().str();
    EXPECT_EQ(policy.error().where.column, column) << policy.error().str();
    EXPECT_EQ(policy.error().message, message);
  };
  expect_error(
      load("deny:\n  - {syscalls: [mount], errno: EPERN}\n"), 2, 32,
      "deny[0].errno: unknown error \"EPERN\"; did you mean \"EPERM\"? (one of EPERM, EACCES, ENOSYS)");
  expect_error(load("deny:\n  - {syscalls: [clone], when: {arg: 6, any_of: 1}}\n"), 2, 37,
               "deny[0].when.arg: expected an argument's index, 0 to 5");
  expect_error(load("deny:\n  - {syscalls: [clone], when: {arg: 0, any_of: 0xZZ}}\n"), 2, 48,
               "deny[0].when.any_of: expected a number such as 2 or 0x10000000, got \"0xZZ\"");
  expect_error(load("deny:\n  - {syscalls: [clone], when: {arg: 0}}\n"), 2, 31,
               "deny[0].when: give the argument's index and one test: {arg: 0, any_of: 0x10000000}, none_of: "
               "or one_of: [...]");
  expect_error(load("deny:\n  - {syscalls: [clone], when: {arg: 0, any_of: 1, none_of: 2}}\n"), 2, 31,
               "deny[0].when: give the argument's index and one test: {arg: 0, any_of: 0x10000000}, none_of: "
               "or one_of: [...]");
  expect_error(load("deny:\n  - {errno: EPERM}\n"), 2, 5,
               "deny[0]: name the system calls it refuses: syscalls: [...]");
  expect_error(load("deny:\n  - {syscalls: [\"mount; rm\"]}\n"), 2, 16,
               "deny[0].syscalls: \"mount; rm\" is not a system call's name");
  expect_error(load("deny: {mount: 1}\n"), 1, 7, "deny: expected a list of rules, got a map");
  expect_error(load("allows: [read]\n"), 1, 1, "unknown key \"allows\"; did you mean \"allow\"?");
  // An allowed call returns no error, and allowing means something only in an allow list.
  expect_error(load("otherwise: EPERM\nallow:\n  - {syscalls: [read], errno: EPERM}\n"), 3, 24,
               "unknown key \"errno\" in allow[0] (valid keys: syscalls, when)");
  expect_error(load("allow:\n  - {syscalls: [read]}\n"), 2, 3,
               "allow: an allow list refuses the other calls: add otherwise: EPERM");
  expect_error(load("otherwise: EPERM\nallow:\n  - {syscalls: [socket], when: {arg: 0, one_of: []}}\n"), 3,
               49, "allow[0].when.one_of: list at least one value");

  auto policy = load("deny:\n  - {syscalls: [clone], when: {arg: 0, any_of: 0x30000000}, errno: EACCES}\n");
  ASSERT_TRUE(policy.ok()) << policy.error().str();
  ASSERT_EQ(policy->rules.size(), 1u);
  EXPECT_EQ(policy->rules[0].when->mask, 0x30000000u);
  EXPECT_EQ(policy->rules[0].errno_value, EACCES);
  EXPECT_FALSE(policy->otherwise_errno);
  auto allowed =
      load("otherwise: ENOSYS\nallow:\n  - {syscalls: [socket], when: {arg: 0, one_of: [1, 0x2]}}\n");
  ASSERT_TRUE(allowed.ok()) << allowed.error().str();
  EXPECT_EQ(allowed->otherwise_errno, ENOSYS);
  EXPECT_TRUE(allowed->rules[0].allow);
  EXPECT_EQ(allowed->rules[0].when->values, (std::vector<std::uint64_t>{1, 2}));
}

}  // namespace
}  // namespace preflight::spec
