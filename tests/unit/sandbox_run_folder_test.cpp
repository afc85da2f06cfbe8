#include <gtest/gtest.h>

#include <chrono>
#include <optional>

#include "sandbox/run_folder.hpp"
#include "test_support.hpp"

namespace preflight::sandbox {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

TEST(RunFolder, APrunedFolderIsOnlyOneWhoseOwnerIsGone) {
  TempDir dir;
  const fs::path runs = dir.path() / "runs";
  auto alive = RunFolder::create(runs / "alive");  // held by this process until the test ends
  ASSERT_TRUE(alive) << alive.error().message;
  {
    auto ended = RunFolder::create(runs / "ended");  // its owner let go
    ASSERT_TRUE(ended);
  }
  fs::create_directories(runs / "old-unlocked");  // an older Preflight's, two days old
  fs::last_write_time(runs / "old-unlocked", fs::file_time_type::clock::now() - std::chrono::hours(48));
  fs::create_directories(runs / "new-unlocked");  // one being made this instant
  EXPECT_FALSE(RunFolder::create(runs / "alive")) << "a folder is made once";

  const Reaped reaped = reap_abandoned(runs, 0);
  EXPECT_EQ(reaped.removed, 2u);
  EXPECT_EQ(reaped.containers, 0u);  // neither was cut short with a container's root left
  EXPECT_TRUE(fs::exists(runs / "alive"));
  EXPECT_TRUE(fs::exists(runs / "new-unlocked"));
  EXPECT_FALSE(fs::exists(runs / "ended"));
  EXPECT_FALSE(fs::exists(runs / "old-unlocked"));
}

TEST(RunFolder, TheNewestAreKeptCountingThoseInUse) {
  TempDir dir;
  const fs::path runs = dir.path() / "runs";
  auto alive = RunFolder::create(runs / "alive");
  ASSERT_TRUE(alive);
  const auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 3; ++i) {
    const fs::path run = runs / ("ended-" + std::to_string(i));
    ASSERT_TRUE(RunFolder::create(run));
    fs::last_write_time(run, now - std::chrono::minutes(10 * (3 - i)));  // ended-2 the newest
  }
  EXPECT_EQ(reap_abandoned(runs, 2).removed, 2u);  // 2 kept: the live one and the newest ended
  EXPECT_TRUE(fs::exists(runs / "alive"));
  EXPECT_TRUE(fs::exists(runs / "ended-2"));
  EXPECT_FALSE(fs::exists(runs / "ended-1"));
}

}  // namespace
}  // namespace preflight::sandbox
