// The small text helpers: paths under a folder, sizes for people.
#include <gtest/gtest.h>

#include "util/text.hpp"

namespace preflight {
namespace {

TEST(UtilText, PathsUnderAFolder) {
  EXPECT_TRUE(is_under("/job/code/a.py", "/job/code"));
  EXPECT_TRUE(is_under("/job/code/a.py", "/job/code/"));
  EXPECT_FALSE(is_under("/job/codex/a.py", "/job/code"));
  EXPECT_FALSE(is_under("/job/code", "/job/code"));
  EXPECT_FALSE(is_under("/job/code/a.py", ""));
}

TEST(UtilText, HumanSizes) {
  EXPECT_EQ(human_size(312), "312 B");
  EXPECT_EQ(human_size(2048), "2.0 KiB");
  EXPECT_EQ(human_size(3ull << 29), "1.5 GiB");
}

}  // namespace
}  // namespace preflight
