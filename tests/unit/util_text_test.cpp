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

TEST(UtilText, PlainTextDropsTerminalEscapesAndReplacesControlCharacters) {
  // PyTorch 2.6's torch.load refusal, as it prints it: bold, then normal.
  EXPECT_EQ(plain_text("two options, \x1b[1mdo those steps only if you trust the source\x1b[0m. (1)"),
            "two options, do those steps only if you trust the source. (1)");
  EXPECT_EQ(plain_text("a\x1b]0;pwned title\x07"
                       "b\x1b]52;c;Y2xpcA==\x1b\\c"),
            "abc");  // title, clipboard
  EXPECT_EQ(plain_text("cut short \x1b[1;3"), "cut short ");
  EXPECT_EQ(plain_text("bell\x07 cr\r del\x7f c1\xc2\x9b ok"),
            "bell\xEF\xBF\xBD cr\xEF\xBF\xBD del\xEF\xBF\xBD c1\xEF\xBF\xBD ok");
  EXPECT_EQ(plain_text("tab\tline\nnon-ASCII \xc2\xb5s caf\xc3\xa9"),
            "tab\tline\nnon-ASCII \xc2\xb5s caf\xc3\xa9");
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
