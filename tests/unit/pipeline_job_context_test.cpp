// load_job_context's work for the wait: what it is given runs on the resolved image while the
// shipped policies load, and its error is the load's.
#include <gtest/gtest.h>

#include "pipeline/job_context.hpp"
#include "test_support.hpp"

namespace preflight::pipeline {
namespace {

namespace fs = std::filesystem;
using testing::ScopedEnv;
using testing::TempDir;

// A job on a root filesystem in its own folder, the cache in `dir`.
JobChoices job_on_a_rootfs(const TempDir& dir) {
  fs::create_directories(dir.path() / "job/root/usr/bin");
  dir.write("job/job.yaml", "image: rootfs:./root\ncommand: echo hello\n");
  JobChoices choices;
  choices.job_file = dir.path() / "job/job.yaml";
  return choices;
}

TEST(JobContext, TheWorkGivenForTheWaitRunsOnTheResolvedImage) {
  TempDir dir;
  ScopedEnv cache("PREFLIGHT_CACHE", (dir.path() / "cache").c_str());
  fs::path seen;
  auto context = load_job_context(job_on_a_rootfs(dir), {}, [&](const image::UnpackedImage& image) -> Status {
    seen = image.rootfs;
    return Ok{};
  });
  ASSERT_TRUE(context) << context.error().str();
  EXPECT_FALSE(seen.empty());
  EXPECT_EQ(seen, context->image.rootfs);
  EXPECT_FALSE(context->policies.failures.categories().empty());  // and the policies came after it
}

TEST(JobContext, AnErrorOfTheWorkGivenForTheWaitIsTheLoads) {
  TempDir dir;
  ScopedEnv cache("PREFLIGHT_CACHE", (dir.path() / "cache").c_str());
  auto context = load_job_context(job_on_a_rootfs(dir), {}, [](const image::UnpackedImage&) -> Status {
    return Error::runtime("no room for the run");
  });
  ASSERT_FALSE(context);
  EXPECT_EQ(context.error().message, "no room for the run");
}

}  // namespace
}  // namespace preflight::pipeline
