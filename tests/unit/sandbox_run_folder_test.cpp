#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
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

TEST(RunFolder, ANameTakenIsDrawnAgain) {
  TempDir dir;
  const fs::path runs = dir.path() / "runs";
  auto first = RunFolder::create(runs / "mnist-1");
  ASSERT_TRUE(first);
  // Two runs of one job in the same second, their random parts alike: the second draws again.
  int draws = 0;
  auto second = RunFolder::create_new(runs, [&] { return ++draws < 3 ? "mnist-1" : "mnist-2"; });
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->path(), runs / "mnist-2");
  EXPECT_EQ(draws, 3);
  // A name that stays taken ends the draws, with the error that says so.
  draws = 0;
  auto stuck = RunFolder::create_new(runs, [&] {
    ++draws;
    return "mnist-1";
  });
  ASSERT_FALSE(stuck);
  EXPECT_EQ(draws, RunFolder::kNameDraws);
  EXPECT_NE(stuck.error().message.find("File exists"), std::string::npos) << stuck.error().message;
  // Another failure is not drawn again.
  draws = 0;
  std::ofstream(dir.path() / "not-a-folder") << "x";
  EXPECT_FALSE(RunFolder::create_new(dir.path() / "not-a-folder", [&] {
    ++draws;
    return "run";
  }));
  EXPECT_EQ(draws, 1);
}

}  // namespace
}  // namespace preflight::sandbox
