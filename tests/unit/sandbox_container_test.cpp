#include <gtest/gtest.h>

#include <fstream>

#include "sandbox/container.hpp"
#include "test_support.hpp"
#include "util/text.hpp"

namespace preflight::sandbox {
namespace {

namespace fs = std::filesystem;
using testing::FakeRuntime;
using testing::TempDir;

std::string read_text(const fs::path& path) { return read_file(path).value_or(""); }

// A runtime whose `delete` waits (up to 10 s) for the file `go`, which the test makes only
// once the deletion has been started, then says what it was asked in `asked`.
std::string delete_after_go(const TempDir& dir) {
  const std::string go = (dir.path() / "go").string();
  return "for i in $(seq 100); do [ -e '" + go + "' ] && break; sleep 0.1; done\n" + "[ -e '" + go +
         "' ] && echo \"$*\" >'" + (dir.path() / "asked").string() + "' || echo blocked >'" +
         (dir.path() / "asked").string() + "'\n";
}

TEST(ContainerDeletion, StartsTheRuntimesDeleteWithoutWaitingAndFinishWaitsForIt) {
  TempDir dir;
  FakeRuntime runtime(dir, delete_after_go(dir));
  ContainerDeletion deletion("preflight-job-1");
  std::ofstream(dir.path() / "go") << "";  // had the constructor waited, `delete` would say blocked
  deletion.finish();
  EXPECT_EQ(read_text(dir.path() / "asked"), "delete --force preflight-job-1\n");
}

TEST(ContainerDeletion, TheLastOneGoesWhenItsOwnerDoesOrAnotherTakesItsPlace) {
  TempDir dir;
  FakeRuntime runtime(dir, delete_after_go(dir));
  {
    ContainerDeletion deletion("preflight-job-1");
    std::ofstream(dir.path() / "go") << "";
  }
  EXPECT_EQ(read_text(dir.path() / "asked"), "delete --force preflight-job-1\n");

  fs::remove(dir.path() / "asked");
  ContainerDeletion last("preflight-job-2");
  last = ContainerDeletion();  // the run after it: job-2's deletion is finished first
  EXPECT_EQ(read_text(dir.path() / "asked"), "delete --force preflight-job-2\n");
}

TEST(ContainerDeletion, AnEmptyOneFinishesNothing) {
  TempDir dir;
  FakeRuntime runtime(dir, "echo \"$*\" >'" + (dir.path() / "asked").string() + "'\n");
  ContainerDeletion none;
  none.finish();
  EXPECT_FALSE(fs::exists(dir.path() / "asked"));
}

}  // namespace
}  // namespace preflight::sandbox
