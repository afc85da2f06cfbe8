// The config runc gets: without a cgroup (a rootless run) no limits in it and a note for each
// one left out; the profile's seccomp policy as runtime-spec filter rules, answering the host's
// own system-call ABI and those the image holds a program loader of.
#include <gtest/gtest.h>

#include "sandbox/oci_config.hpp"
#include "test_support.hpp"

namespace preflight::sandbox {
namespace {

plan::RunPlan limited_plan() {
  plan::RunPlan plan;
  plan.limits.memory_bytes = 512ull << 20;
  plan.limits.pids = 256;
  plan.limits.cpus = 1.5;
  plan.limits.shm_bytes = 64ull << 20;
  return plan;
}

TEST(SandboxOciConfig, WithoutACgroupTheConfigSetsNoLimitsButKeepsTheShmSize) {
  auto config = make_oci_config(limited_plan(), "/r", std::nullopt);
  EXPECT_FALSE(config["linux"].contains("cgroupsPath"));
  EXPECT_FALSE(config["linux"].contains("resources"));
  bool shm_sized = false;
  for (const auto& m : config["mounts"])
    if (m["destination"] == "/dev/shm")
      for (const auto& option : m["options"]) shm_sized |= option == "size=" + std::to_string(64ull << 20);
  EXPECT_TRUE(shm_sized);
}

TEST(SandboxOciConfig, EachUnenforcedLimitIsStatedWithWhy) {
  auto notes = unenforced_limits(limited_plan().limits);
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_EQ(
      notes[0],
      "the platform's memory limit of 512.0 MiB is not enforced: Preflight runs without root and has no "
      "cgroup to set it in (docs/rootless.md)");
  EXPECT_NE(notes[1].find("limit of 256 processes is not enforced"), std::string::npos);
  EXPECT_NE(notes[2].find("limit of 1.5 CPUs is not enforced"), std::string::npos);
}

TEST(SandboxOciConfig, NoLimitsNoNotes) { EXPECT_TRUE(unenforced_limits({}).empty()); }

// The user's --network: as root a sysfs of the container's own; without root, which may not
// mount one there, the host's /sys bound read-only with every mount below it.
TEST(SandboxOciConfig, WithTheHostsNetworkSysIsTheHostsReadOnlyWithoutRoot) {
  plan::RunPlan plan;
  const auto sys = [&](const std::optional<std::string>& cgroup) {
    const auto config = make_oci_config(plan, "/r", cgroup);
    for (const auto& m : config["mounts"])
      if (m["destination"] == "/sys") return m;
    return nlohmann::json();
  };
  EXPECT_EQ(sys(std::nullopt)["type"], "sysfs");
  plan.network = true;
  EXPECT_EQ(sys("/preflight/x")["type"], "sysfs");
  EXPECT_EQ(sys(std::nullopt)["type"], "bind");
  EXPECT_EQ(sys(std::nullopt)["source"], "/sys");
  EXPECT_EQ(sys(std::nullopt)["options"], nlohmann::json({"rbind", "rro", "nosuid", "noexec", "nodev"}));
}

TEST(SandboxOciConfig, TheSeccompPolicyRefusesItsCallsWithItsErrorsAndAllowsTheRest) {
  plan::RunPlan plan;
  EXPECT_FALSE(make_oci_config(plan, "/r", std::nullopt)["linux"].contains("seccomp"));

  using Test = spec::SeccompCondition::Test;
  plan.seccomp.rules = {{{"unshare", "mount"}, false, 1, std::nullopt},
                        {{"clone"}, false, 1, spec::SeccompCondition{0, Test::AnyBit, 0x30000000, {}}}};
  const auto seccomp = make_oci_config(plan, "/r", std::nullopt)["linux"]["seccomp"];
  EXPECT_EQ(seccomp["defaultAction"], "SCMP_ACT_ALLOW");
  EXPECT_FALSE(seccomp["architectures"].empty());
  const auto& rules = seccomp["syscalls"];
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0]["names"], nlohmann::json({"unshare", "mount"}));
  EXPECT_EQ(rules[0]["action"], "SCMP_ACT_ERRNO");
  EXPECT_EQ(rules[0]["errnoRet"], 1);
  EXPECT_FALSE(rules[0].contains("args"));
  // One rule per flag: a masked comparison holds only when every bit of its mask is set.
  for (int i : {1, 2}) {
    const std::uint64_t bit = i == 1 ? 0x10000000 : 0x20000000;
    EXPECT_EQ(rules[i]["names"], nlohmann::json({"clone"}));
    ASSERT_EQ(rules[i]["args"].size(), 1u);
    EXPECT_EQ(rules[i]["args"][0]["index"], 0);
    EXPECT_EQ(rules[i]["args"][0]["op"], "SCMP_CMP_MASKED_EQ");
    EXPECT_EQ(rules[i]["args"][0]["value"], bit);
    EXPECT_EQ(rules[i]["args"][0]["valueTwo"], bit);
  }
}

TEST(SandboxOciConfig, AnAllowListRefusesTheOtherCallsWithItsError) {
  using Test = spec::SeccompCondition::Test;
  plan::RunPlan plan;
  plan.seccomp.otherwise_errno = 1;
  plan.seccomp.rules = {{{"read", "write"}, true, 1, std::nullopt},
                        {{"clone"}, true, 1, spec::SeccompCondition{0, Test::NoBit, 0x7E020000, {}}},
                        {{"socket"}, true, 1, spec::SeccompCondition{0, Test::OneOf, 0, {1, 2}}},
                        {{"clone3"}, false, 38, std::nullopt}};
  const auto seccomp = make_oci_config(plan, "/r", std::nullopt)["linux"]["seccomp"];
  EXPECT_EQ(seccomp["defaultAction"], "SCMP_ACT_ERRNO");
  EXPECT_EQ(seccomp["defaultErrnoRet"], 1);
  const auto& rules = seccomp["syscalls"];
  ASSERT_EQ(rules.size(), 5u);
  EXPECT_EQ(rules[0]["action"], "SCMP_ACT_ALLOW");
  EXPECT_FALSE(rules[0].contains("errnoRet"));
  // No namespace flag: one comparison of the masked argument with zero.
  EXPECT_EQ(rules[1]["args"],
            nlohmann::json::parse(
                R"([{"index": 0, "value": 2114060288, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}])"));
  // One of the families: a rule per value, since the rules of a call are alternatives.
  for (int i : {2, 3}) {
    EXPECT_EQ(rules[i]["names"], nlohmann::json({"socket"}));
    EXPECT_EQ(rules[i]["args"][0]["op"], "SCMP_CMP_EQ");
    EXPECT_EQ(rules[i]["args"][0]["value"], i - 1);
  }
  EXPECT_EQ(rules[4]["action"], "SCMP_ACT_ERRNO");
  EXPECT_EQ(rules[4]["errnoRet"], 38);
}

#if defined(__x86_64__)
TEST(SandboxOciConfig, TheFilterAnswersTheHostsAbiAndThePlansOthers) {
  plan::RunPlan plan;
  plan.seccomp.rules = {{{"read"}, true, 1, std::nullopt}};
  EXPECT_EQ(make_oci_config(plan, "/r", std::nullopt)["linux"]["seccomp"]["architectures"],
            nlohmann::json({"SCMP_ARCH_X86_64"}));
  plan.seccomp_abis = {"SCMP_ARCH_X32", "SCMP_ARCH_X86_64"};
  EXPECT_EQ(make_oci_config(plan, "/r", std::nullopt)["linux"]["seccomp"]["architectures"],
            nlohmann::json({"SCMP_ARCH_X86_64", "SCMP_ARCH_X32"}));
  EXPECT_EQ(plan::compat_abis(), (std::vector<std::string>{"SCMP_ARCH_X86", "SCMP_ARCH_X32"}));
}

TEST(SandboxOciConfig, AnImageRunsTheAbisWhoseProgramLoaderItHoldsFoundAsInItsRoot) {
  namespace fs = std::filesystem;
  testing::TempDir image;
  EXPECT_TRUE(compat_abis_of_image(image.path()).empty());
  EXPECT_TRUE(compat_abis_of_image(image.path() / "missing").empty());
  // i386's loader through merged /usr's links, absolute ones resolved in the image's root.
  image.write("usr/lib/i386-linux-gnu/ld-linux.so.2", "ELF");
  fs::create_directories(image.path() / "usr/lib");
  fs::create_directory_symlink("usr/lib", image.path() / "lib");
  fs::create_symlink("/usr/lib/i386-linux-gnu/ld-linux.so.2", image.path() / "usr/lib/ld-linux.so.2");
  EXPECT_EQ(compat_abis_of_image(image.path()), (std::vector<std::string>{"SCMP_ARCH_X86"}));
  // A link that names a host file the image lacks leads nowhere: the host's x32 loader, or any
  // other file of the host, never counts for the image.
  testing::TempDir host;
  const fs::path host_loader = host.write("ld-linux-x32.so.2", "ELF");
  fs::create_directories(image.path() / "libx32");
  fs::create_symlink(host_loader, image.path() / "libx32/ld-linux-x32.so.2");
  EXPECT_EQ(compat_abis_of_image(image.path()), (std::vector<std::string>{"SCMP_ARCH_X86"}));
}
#endif

}  // namespace
}  // namespace preflight::sandbox
