// The jobs of a batch: job files, folders searched for job.yaml and lists of jobs, and a
// runner's stable share of them.
#include <gtest/gtest.h>

#include <fstream>

#include "pipeline/job_list.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

std::vector<std::string> relative(const std::vector<fs::path>& jobs, const fs::path& base) {
  std::vector<std::string> out;
  for (const auto& job : jobs) out.push_back(job.lexically_relative(base).generic_string());
  return out;
}

TEST(PipelineJobList, FoldersAreSearchedSortedWithoutHiddenFoldersLinksOrRepeats) {
  testing::TempDir dir;
  const fs::path& d = dir.path();
  write(d / "jobs" / "b" / "job.yaml", "name: b\n");
  write(d / "jobs" / "a" / "job.yaml", "name: a\n");
  write(d / "jobs" / "a" / "deep" / "job.yaml", "name: deep\n");
  write(d / "jobs" / ".git" / "job.yaml", "name: hidden\n");
  write(d / "jobs" / "node_modules" / "x" / "job.yaml", "name: vendored\n");
  write(d / "elsewhere" / "job.yaml", "name: elsewhere\n");
  fs::create_directory_symlink(d / "elsewhere", d / "jobs" / "linked");
  write(d / "single.yml", "name: single\n");
  auto jobs = pipeline::expand_jobs(
      {(d / "single.yml").string(), (d / "jobs").string(), (d / "jobs" / "b" / "job.yaml").string()});
  ASSERT_TRUE(jobs) << jobs.error().message;
  EXPECT_EQ(relative(*jobs, d), (std::vector<std::string>{"single.yml", "jobs/a/deep/job.yaml",
                                                          "jobs/a/job.yaml", "jobs/b/job.yaml"}));
}

TEST(PipelineJobList, AListNamesJobsAndFoldersRelativeToItselfWithCommentsAndBlankLines) {
  testing::TempDir dir;
  const fs::path& d = dir.path();
  write(d / "jobs" / "a" / "job.yaml", "name: a\n");
  write(d / "jobs" / "b" / "train.yaml", "name: b\n");
  write(d / "ci" / "jobs.txt", "# the gate's jobs\n\n  ../jobs/b/train.yaml \r\n../jobs\n");
  auto jobs = pipeline::expand_jobs({(d / "ci" / "jobs.txt").string()});
  ASSERT_TRUE(jobs) << jobs.error().message;
  EXPECT_EQ(relative(*jobs, d), (std::vector<std::string>{"jobs/b/train.yaml", "jobs/a/job.yaml"}));
}

TEST(PipelineJobList, WhatCannotBeAJobIsBadInputNamingWhereItWasNamed) {
  testing::TempDir dir;
  const fs::path& d = dir.path();
  write(d / "other.txt", "jobs.txt\n");
  write(d / "list.txt", "# first\nmissing/job.yaml\n");
  write(d / "nested.txt", "other.txt\n");
  fs::create_directory(d / "empty");
  auto missing = pipeline::expand_jobs({(d / "list.txt").string()});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::BadInput);
  EXPECT_NE(missing.error().message.find("list.txt:2: "), std::string::npos) << missing.error().message;
  auto nested = pipeline::expand_jobs({(d / "nested.txt").string()});
  ASSERT_FALSE(nested);
  EXPECT_NE(nested.error().message.find("may not name another list"), std::string::npos);
  auto empty = pipeline::expand_jobs({(d / "empty").string()});
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("no job.yaml"), std::string::npos);
  EXPECT_FALSE(pipeline::expand_jobs({(d / "nothing.yaml").string()}));
}

TEST(PipelineJobList, ShardsParseFromOne) {
  auto shard = pipeline::parse_shard("2/8");
  ASSERT_TRUE(shard);
  EXPECT_EQ(shard->index, 2);
  EXPECT_EQ(shard->count, 8);
  for (const char* bad : {"0/8", "9/8", "2", "2/0", "a/b", "2/8x", "-1/3", ""})
    EXPECT_FALSE(pipeline::parse_shard(bad)) << bad;
}

TEST(PipelineJobList, ShardsSplitEveryJobOnceTheSameWayWhereverTheJobsLie) {
  std::vector<fs::path> here, there;
  for (int i = 0; i < 200; ++i) {
    here.push_back(fs::path("/home/ana/repo/jobs") / std::to_string(i) / "job.yaml");
    there.push_back(fs::path("/ci/work/checkout/jobs") / std::to_string(i) / "job.yaml");
  }
  std::size_t total = 0;
  for (int index = 1; index <= 4; ++index) {
    const auto mine = pipeline::shard_of(here, {index, 4}, "/home/ana/repo");
    const auto theirs = pipeline::shard_of(there, {index, 4}, "/ci/work/checkout");
    EXPECT_EQ(relative(mine, "/home/ana/repo"), relative(theirs, "/ci/work/checkout"));
    EXPECT_GT(mine.size(), 20u) << "shard " << index << " of 200 jobs in 4";
    total += mine.size();
  }
  EXPECT_EQ(total, here.size());
  // A job added moves no other.
  auto more = here;
  more.push_back("/home/ana/repo/jobs/new/job.yaml");
  const auto before = pipeline::shard_of(here, {3, 4}, "/home/ana/repo");
  auto after = pipeline::shard_of(more, {3, 4}, "/home/ana/repo");
  std::erase(after, fs::path("/home/ana/repo/jobs/new/job.yaml"));
  EXPECT_EQ(before, after);
}

TEST(PipelineJobList, SelectedJobsAreTheShardsOfTheExpandedOnes) {
  testing::TempDir dir;
  const fs::path& d = dir.path();
  for (const char* name : {"a", "b", "c", "d", "e"}) write(d / "jobs" / name / "job.yaml", "name: x\n");
  const std::vector<std::string> args = {(d / "jobs").string()};
  auto all = pipeline::select_jobs(args, "", d);
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(all->size(), 5u);
  std::size_t total = 0;
  for (const char* shard : {"1/2", "2/2"}) {
    auto share = pipeline::select_jobs(args, shard, d);
    ASSERT_TRUE(share) << share.error().message;
    EXPECT_EQ(*share, pipeline::shard_of(*all, *pipeline::parse_shard(shard), d));
    total += share->size();
  }
  EXPECT_EQ(total, 5u);
  EXPECT_FALSE(pipeline::select_jobs(args, "3/2", d));
  EXPECT_FALSE(pipeline::select_jobs({(d / "missing").string()}, "1/2", d));
}

}  // namespace
}  // namespace preflight
