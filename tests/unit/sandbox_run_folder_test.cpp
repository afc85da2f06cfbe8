#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>

#include "model/run_layout.hpp"
#include "sandbox/run_folder.hpp"
#include "test_support.hpp"
#include "util/text.hpp"

namespace preflight::sandbox {
namespace {

namespace fs = std::filesystem;
using testing::FakeRuntime;
using testing::TempDir;

// A run of `runs` whose Preflight was killed: its folder, no longer locked, and its
// container's root still there.
void make_cut_short_run(const fs::path& runs, const std::string& name) {
  auto run = RunFolder::create(runs / name);
  ASSERT_TRUE(run);
  fs::create_directories(model::RunLayout(run->path()).rootfs());
}

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

// What a rootless Preflight's outer process does (docs/rootless.md): it stops the container
// of a run whose process died, and only that; the folder is left for the next run to reap.
TEST(RunFolder, OnlyTheContainerOfARunCutShortWhoseOwnerIsGoneIsStopped) {
  TempDir dir;
  const fs::path log = dir.path() / "log";
  // Deletes any container it is asked to, and then no longer knows it.
  FakeRuntime runtime(dir, "echo \"$@\" >>\"" + log.string() + "\"\ncase \"$*\" in *state*) exit 1;; esac\n");
  const fs::path runs = dir.path() / "runs";
  auto running = RunFolder::create(runs / "running");  // its container's root is there, and it lives
  ASSERT_TRUE(running);
  fs::create_directories(model::RunLayout(running->path()).rootfs());
  make_cut_short_run(runs, "killed");
  ASSERT_TRUE(RunFolder::create(runs / "ended"));  // ended whole: its root was removed

  EXPECT_EQ(stop_abandoned_containers(runs), 1u);
  // Without root, runc's global options (its root in the cache) come first.
  const std::string called = read_file(log).value_or("");
  EXPECT_NE(called.find("delete --force preflight-killed\n"), std::string::npos) << called;
  EXPECT_TRUE(called.ends_with("state preflight-killed\n")) << called;  // gone, as it should be
  EXPECT_EQ(std::count(called.begin(), called.end(), '\n'), 2) << called;
  EXPECT_TRUE(fs::exists(runs / "killed"));
  EXPECT_TRUE(fs::exists(runs / "ended"));
}

// A run whose Preflight was killed never tidied its folder: the reaping run does, as after
// any run, so that nothing set-user-ID or a device is left of it on the host.
TEST(RunFolder, WhatARunCutShortKeptIsDisarmedWhenItIsReaped) {
  TempDir dir;
  FakeRuntime runtime(dir, "case \"$*\" in *state*) exit 1;; esac\n");  // deletes every container
  const fs::path runs = dir.path() / "runs", killed = runs / "killed";
  make_cut_short_run(runs, "killed");
  const model::RunLayout layout(killed);
  fs::create_directories(layout.upper());
  const fs::path shell = dir.write("runs/killed/outputs/model/rootsh", "#!/bin/sh\n");
  fs::permissions(shell, static_cast<fs::perms>(04755));
  ASSERT_EQ(::mkfifo((killed / "outputs" / "model" / "pipe").c_str(), 0600), 0);
  dir.write("runs/killed/outputs/model/weights.pt", "w");

  reap_abandoned(runs, 10);  // kept: the ten newest
  EXPECT_EQ(fs::status(shell).permissions() & fs::perms::set_uid, fs::perms::none);
  EXPECT_FALSE(fs::exists(fs::symlink_status(killed / "outputs" / "model" / "pipe")));
  EXPECT_TRUE(fs::exists(killed / "outputs" / "model" / "weights.pt"));
  EXPECT_FALSE(fs::exists(layout.rootfs()));
  EXPECT_FALSE(fs::exists(layout.upper()));
}

// Without root, the process in the user namespace cannot delete a killed run's container, and
// that container's mounts are in its own namespace, out of sight: the folder stays, whatever
// may be kept, for the process outside to stop the container it marks.
TEST(RunFolder, AFolderIsNotRemovedFromUnderAContainerThatCouldNotBeDeleted) {
  TempDir dir;
  FakeRuntime runtime(dir, "case \"$*\" in *delete*) exit 1;; *) exit 0;; esac\n");
  const fs::path runs = dir.path() / "runs";
  make_cut_short_run(runs, "killed");
  const Reaped reaped = reap_abandoned(runs, 0);
  EXPECT_EQ(reaped.containers, 0u);
  EXPECT_EQ(reaped.removed, 0u);
  EXPECT_TRUE(fs::exists(model::RunLayout(runs / "killed").rootfs()));
}

// runc's `delete --force` from a user namespace without a say over the container's (another
// rootless Preflight's) cannot signal its process, and still exits 0, "container still
// running": the container counts as not deleted, and its folder stays for the process outside.
TEST(RunFolder, ADeleteThatLeavesTheContainerRunningIsNoDeletion) {
  TempDir dir;
  FakeRuntime runtime(dir, "case \"$*\" in *delete*) echo 'container still running' >&2;; esac\nexit 0\n");
  const fs::path runs = dir.path() / "runs";
  make_cut_short_run(runs, "killed");
  EXPECT_EQ(stop_abandoned_containers(runs), 0u);
  const Reaped reaped = reap_abandoned(runs, 0);
  EXPECT_EQ(reaped.containers, 0u);
  EXPECT_EQ(reaped.removed, 0u);
  EXPECT_TRUE(fs::exists(model::RunLayout(runs / "killed").rootfs()));
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

TEST(RunFolder, IsTheUsersOwnAndNoOneElses) {
  TempDir dir;
  auto folder = RunFolder::create(dir.path() / "runs" / "run");
  ASSERT_TRUE(folder) << folder.error().message;
  EXPECT_EQ(fs::status(folder->path()).permissions(), fs::perms::owner_all);
}

// A finished run of `mib` MiB of outputs, `minutes` old, stopped by Preflight or not.
fs::path finished_run(const fs::path& runs, const std::string& name, int mib, int minutes, bool stopped) {
  const fs::path dir = runs / name;
  EXPECT_TRUE(RunFolder::create(dir));
  const model::RunLayout layout(dir);
  fs::create_directories(layout.output("o"));
  std::ofstream(layout.output("o") / "big") << std::string(static_cast<std::size_t>(mib) << 20, 'x');
  std::ofstream(dir / "report.json") << "{}";
  if (stopped) std::ofstream(layout.stopped()) << "stopped\n";
  fs::last_write_time(dir, fs::file_time_type::clock::now() - std::chrono::minutes(minutes));
  return dir;
}

TEST(PruneRuns, WhatStoppedRunsWroteGoesFirstLargestFirstThenTheOldestFolders) {
  TempDir dir;
  const fs::path runs = dir.path() / "runs";
  constexpr std::uint64_t MiB = 1 << 20;
  const fs::path oldest = finished_run(runs, "oldest", 1, 30, false);
  const fs::path small = finished_run(runs, "stopped-small", 2, 20, true);
  const fs::path large = finished_run(runs, "stopped-large", 4, 10, true);
  auto alive = RunFolder::create(runs / "alive");  // held: never pruned
  ASSERT_TRUE(alive);
  std::ofstream(model::RunLayout(alive->path()).stopped()) << "stopped\n";

  EXPECT_EQ(prune_runs(runs, 0).bytes, 0u);
  RunsPruned pruned = prune_runs(runs, 3 * MiB);
  EXPECT_EQ(pruned.outputs, 1u);
  EXPECT_EQ(pruned.folders, 0u);
  EXPECT_GE(pruned.bytes, 4 * MiB);
  EXPECT_FALSE(fs::exists(large / "outputs"));
  EXPECT_TRUE(fs::exists(large / "report.json"));  // its report stays for `preflight show`
  EXPECT_TRUE(fs::exists(small / "outputs/o/big"));

  pruned = prune_runs(runs, 3 * MiB);  // the other stopped run's outputs, then the oldest folder
  EXPECT_EQ(pruned.outputs, 1u);
  EXPECT_EQ(pruned.folders, 1u);
  EXPECT_FALSE(fs::exists(small / "outputs"));
  EXPECT_FALSE(fs::exists(oldest));
  EXPECT_TRUE(fs::exists(small));
  EXPECT_TRUE(fs::exists(alive->path()));
}

}  // namespace
}  // namespace preflight::sandbox
