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

TEST(ReportClamps, AJobWithNoEndIsANoteWithItsLoopItsReasonAndItsPace) {
  harness::UncutLoop loop{"while loop", "it has no exit but an exception or a return",
                          frame_in_code("/job/code/trainer.py", 65)};
  harness::UncutLoop other{"while loop", "it is the last statement of its function",
                           frame_in_code("/job/code/fit.py", 80)};
  harness::EndlessRun run{
      150,          50, frame_in_code("/job/code/trainer.py", 54), frame_in_code("/job/code/trainer.py", 65),
      "while loop", 1};
  EXPECT_EQ(
      endless_note(run, {loop, other}, {}, 41234.5, "/job/code"),
      "the job has no end of its own: after its sampled steps it went on training in the while loop at "
      "trainer.py:65, which the harness could not shorten: it has no exit but an exception or a return "
      "(150 training steps, the last 50 reaching no new line of its code and no new stage), so the dry run "
      "ended it there and judged what it had run; on the platform it trains until the platform's time "
      "limit, at about 41,000 training steps an hour");
  // The loop it was ended in did not run in full: only the other loop keeps its note.
  std::vector<std::string> notes = loop_notes({loop, other}, "/job/code", {run});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("fit.py:80"), std::string::npos) << notes[0];

  harness::EndlessRun in_library{100, 50, std::nullopt, std::nullopt, "", 1};
  EXPECT_NE(endless_note(in_library, {}, {}, std::nullopt, "/job/code")
                .find("went on training in a library's loop (100 training steps"),
            std::string::npos);
}

TEST(ReportClamps, AJobEndedInALoopOfAKeptCountRunsToItsOwnEndOnThePlatform) {
  harness::UncutLoop loop{"while loop", "it is the last statement of its module",
                          frame_in_code("/job/code/pretrain.py", 50)};
  harness::EndlessRun run{150,
                          50,
                          frame_in_code("/job/code/pretrain.py", 56),
                          frame_in_code("/job/code/pretrain.py", 50),
                          "while loop",
                          1};
  harness::CountEvent count{"argparse --max-steps", "steps", 2000000,
                            frame_in_code("/job/code/pretrain.py", 13), 1};
  EXPECT_EQ(
      endless_note(run, {loop}, {count}, 41234.5, "/job/code"),
      "the dry run ended the job after its sampled steps: it went on training in the while loop at "
      "pretrain.py:50, which the harness could not shorten: it is the last statement of its module (150 "
      "training steps, the last 50 reaching no new line of its code and no new stage); on the platform it "
      "runs to its own end: 2000000 steps (argparse --max-steps at pretrain.py:13)");
}

}  // namespace
}  // namespace preflight::report
