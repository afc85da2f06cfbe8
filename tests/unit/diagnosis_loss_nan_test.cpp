// A loss that turned NaN during training (the harness's `nonfinite` event): a Loss NaN error
// even when the job carried on and exited 0, told once when the job also died of it.
#include <gtest/gtest.h>

#include "diagnosis_fixtures.hpp"
#include "report/report.hpp"

namespace preflight::diagnosis {
namespace {

using namespace fixtures;

harness::NonfiniteEvent nan_at(int step, int pid = 10, const std::string& value = "nan") {
  harness::NonfiniteEvent event;
  event.step = step;
  event.value = value;
  event.stage = "train";
  event.t = 0.7;
  event.pid = pid;
  event.where = user_frame("/job/code/train.py", 31);
  return event;
}

// A run that exited 0 after its loss went NaN at `step`.
RunOutcome diverged(int step) {
  RunOutcome outcome;
  outcome.exit_code = 0;
  outcome.events.started = true;
  outcome.events.command_started = true;
  outcome.events.main_pid = 10;
  outcome.events.exit_code = 0;
  outcome.events.stages = {{"train", 0.5, 10, "loss.backward()", std::nullopt}};
  outcome.events.nonfinite = {nan_at(step)};
  return outcome;
}

TEST(DiagnosisLossNaN, AJobThatCarriesOnAfterANaNLossFails) {
  report::Finding finding = only_finding(diverged(3));
  EXPECT_EQ(finding.category, "Loss NaN");
  EXPECT_EQ(finding.dimension, "Deep Learning Specific");
  EXPECT_EQ(finding.root_cause, "Inappropriate Model Parameter/Structure");
  EXPECT_EQ(finding.rule, "loss-nan");
  EXPECT_EQ(finding.severity, report::Severity::Error);
  EXPECT_EQ(finding.retry, report::Retry::Useless);
  EXPECT_EQ(finding.stage, "train");
  EXPECT_EQ(finding.location.file, "train.py");
  EXPECT_EQ(finding.location.line, 31);
  EXPECT_TRUE(contains(finding.message, "step 3")) << finding.message;
  EXPECT_TRUE(contains(finding.message, "NaN")) << finding.message;
  EXPECT_TRUE(contains(finding.message, "exited 0")) << finding.message;
  EXPECT_TRUE(contains(finding.hint, "learning rate")) << finding.hint;
  EXPECT_EQ(report::verdict_of({finding}), "fail");
}

TEST(DiagnosisLossNaN, AnInfiniteLossIsNamedSo) {
  RunOutcome outcome = diverged(1);
  outcome.events.nonfinite = {nan_at(1, 10, "inf")};
  EXPECT_TRUE(contains(only_finding(outcome).message, "infinite at training step 1"));
}

TEST(DiagnosisLossNaN, NotRepeatedWhenTheJobThenDiedOfIt) {
  RunOutcome outcome = crashed("RuntimeError", "loss is nan, stopping", "train");
  outcome.events.main_pid = 10;
  outcome.events.nonfinite = {nan_at(4)};
  report::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.category, "Loss NaN");
  EXPECT_TRUE(contains(finding.message, "step 4")) << finding.message;
  EXPECT_FALSE(contains(finding.message, "exited 0")) << finding.message;
}

TEST(DiagnosisLossNaN, NotRepeatedWhenALossNaNLineEndedTheJob) {
  RunOutcome outcome = diverged(2);
  outcome.exit_code = 1;
  outcome.output = {line("step 3 loss: nan", false, OutputLine::Stream::Stdout)};
  EXPECT_EQ(only_finding(outcome).category, "Loss NaN");
}

TEST(DiagnosisLossNaN, ComesBeforeAnotherFailureItLikelyCaused) {
  RunOutcome outcome = crashed("ValueError", "Input contains NaN.", "evaluate");
  outcome.events.main_pid = 10;
  outcome.events.nonfinite = {nan_at(2)};
  std::vector<report::Finding> findings = diagnose(shipped_rules(), outcome, philly());
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].category, "Loss NaN");
  EXPECT_EQ(findings[0].stage, "train");
  EXPECT_EQ(findings[1].stage, "evaluate");
  EXPECT_NE(findings[1].category, "Loss NaN");
}

TEST(DiagnosisLossNaN, TheMainProcessIsPreferredAndLibraryFramesAreNotALocation) {
  RunOutcome outcome = diverged(5);
  harness::NonfiniteEvent other = nan_at(1, 11);
  outcome.events.nonfinite = {other, nan_at(5)};
  outcome.events.nonfinite[1].where = library_frame();
  report::Finding finding = only_finding(outcome);
  EXPECT_TRUE(contains(finding.message, "step 5")) << finding.message;
  EXPECT_FALSE(finding.location.known());
}

}  // namespace
}  // namespace preflight::diagnosis
