#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "sandbox/disk_watch.hpp"
#include "test_support.hpp"

namespace preflight::sandbox {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

void write_bytes(const fs::path& file, std::size_t bytes) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << std::string(bytes, 'x');
}

TEST(DiskUsed, CountsBlocksAsAQuotaDoesEachFileOnce) {
  TempDir dir;
  write_bytes(dir.path() / "a/data.bin", 1 << 20);
  const std::uint64_t one = disk_used({dir.path()}, 1000);
  EXPECT_GE(one, 1u << 20);
  EXPECT_LT(one, (1u << 20) + (1u << 18));  // and the folder's own blocks
  // A second name for the same file, and a sparse file of 1 GiB that holds nothing.
  fs::create_hard_link(dir.path() / "a/data.bin", dir.path() / "a/again.bin");
  std::ofstream(dir.path() / "sparse.bin").close();
  fs::resize_file(dir.path() / "sparse.bin", 1ull << 30);
  EXPECT_EQ(disk_used({dir.path()}, 1000), one);
}

TEST(DiskWatch, AJobPastTheQuotaInAnyWritablePlaceIsOverIt) {
  TempDir dir;
  plan::RunPlan plan;
  plan.run_dir = dir.path();
  plan.limits.disk_bytes = 1 << 20;
  plan::MountPlan output;
  output.source = dir.path() / "outputs" / "model";
  output.read_only = false;
  plan.mounts.push_back(output);
  plan::MountPlan code;  // read-only: not the job's to fill
  code.source = dir.path() / "code";
  plan.mounts.push_back(code);
  write_bytes(dir.path() / "code/big.bin", 4 << 20);

  const auto started = DiskWatch::Clock::now();
  DiskWatch watch(plan, started);
  EXPECT_EQ(watch.measure(), DiskWatch::Over::Nothing);
  write_bytes(dir.path() / "upper/tmp/cache.bin", 600 << 10);
  EXPECT_EQ(watch.measure(), DiskWatch::Over::Nothing);
  write_bytes(output.source / "epoch-1.pt", 600 << 10);
  EXPECT_EQ(watch.check(started), DiskWatch::Over::Nothing);  // not due yet: nothing measured
  EXPECT_LT(watch.written_bytes(), 1u << 20);
  EXPECT_EQ(watch.check(watch.due()), DiskWatch::Over::Quota);
  EXPECT_GE(watch.written_bytes(), 1200u << 10);
  EXPECT_GE(watch.due(), DiskWatch::Clock::now());
}

TEST(DiskWatch, TheHostKeepsTheLargerOfAGibibyteAndTwoPercentAndAtMostAQuarterOfASmallDisk) {
  constexpr std::uint64_t GiB = 1ull << 30, MiB = 1ull << 20;
  EXPECT_EQ(DiskWatch::host_floor(1024 * GiB), 4 * GiB);
  EXPECT_EQ(DiskWatch::host_floor(100 * GiB), 2 * GiB);
  EXPECT_EQ(DiskWatch::host_floor(20 * GiB), GiB);
  EXPECT_EQ(DiskWatch::host_floor(3 * GiB), 768 * MiB);
  EXPECT_EQ(DiskWatch::host_floor(400 * MiB), 100 * MiB);
}

}  // namespace
}  // namespace preflight::sandbox
