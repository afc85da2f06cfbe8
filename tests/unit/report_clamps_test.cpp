#include <gtest/gtest.h>

#include "report/clamps.hpp"

namespace preflight::report {
namespace {

harness::Frame frame_in_code(const std::string& file, int line) { return {file, line, "train", true}; }

TEST(ReportClamps, ALoopTheHarnessEndedIsNamedWithItsPlace) {
  harness::ClampEvent epochs;
  epochs.what = "for loop";
  epochs.kind = "epochs";
  epochs.original = "150";
  epochs.value = "2";
  epochs.where = frame_in_code("/job/code/train.py", 38);
  epochs.cut = true;
  harness::ClampEvent argparse;
  argparse.what = "argparse --epochs";
  argparse.kind = "epochs";
  argparse.original = "14";
  argparse.value = "2";
  argparse.where = frame_in_code("/job/code/train.py", 9);
  std::vector<Clamp> clamps = clamps_of({epochs, argparse}, "/job/code");
  ASSERT_EQ(clamps.size(), 2u);
  EXPECT_EQ(clamps[0].what, "for loop at train.py:38");
  EXPECT_EQ(clamps[0].kind, "epochs");
  EXPECT_EQ(clamps[0].original, 150);
  EXPECT_EQ(clamps[0].value, 2);
  EXPECT_EQ(clamps[0].location.line, 38);
  EXPECT_EQ(clamps[1].what, "argparse --epochs");  // a value, not a loop: named as before
}

TEST(ReportClamps, ALoopThatRanInFullIsANoteWithItsReason) {
  harness::UncutLoop loop{"while loop", "it is the last statement of its function",
                          frame_in_code("/job/code/fit.py", 80)};
  std::vector<std::string> notes = loop_notes({loop}, "/job/code");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "the while loop at fit.py:80 was not shortened and ran in full: it is the last statement of its "
            "function");
}

}  // namespace
}  // namespace preflight::report
