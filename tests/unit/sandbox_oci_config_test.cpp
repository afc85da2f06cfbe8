// A rootless run's config: no cgroup, so no limits in it, and a note for each one left out.
#include <gtest/gtest.h>

#include "sandbox/oci_config.hpp"

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

}  // namespace
}  // namespace preflight::sandbox
