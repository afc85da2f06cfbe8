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

TEST(UtilText, Utf8CharactersAreWellFormedOrNothing) {
  EXPECT_EQ(utf8_char_length("a", 0), 1u);
  EXPECT_EQ(utf8_char_length("\x01", 0), 1u);
  EXPECT_EQ(utf8_char_length("\xC3\xA9", 0), 2u);          // é
  EXPECT_EQ(utf8_char_length("\xE2\x86\x92", 0), 3u);      // →
  EXPECT_EQ(utf8_char_length("\xF0\x9F\x98\x80", 0), 4u);  // an emoji
  EXPECT_EQ(utf8_char_length("\xEC", 0), 0u);              // cut short
  EXPECT_EQ(utf8_char_length("\xA9", 0), 0u);              // a continuation byte alone
  EXPECT_EQ(utf8_char_length("\xC0\xAF", 0), 0u);          // overlong
  EXPECT_EQ(utf8_char_length("\xED\xA0\x80", 0), 0u);      // a surrogate
  EXPECT_EQ(utf8_char_length("\xF4\x90\x80\x80", 0), 0u);  // past U+10FFFF
}

}  // namespace
}  // namespace preflight
