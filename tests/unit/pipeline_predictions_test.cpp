// Static findings are predictions that the dry run confirms, refutes or does not reach; only
// certain static facts stop a run (docs/diagnosis.md "Predictions").
#include <gtest/gtest.h>

#include "pipeline/predictions.hpp"

namespace preflight::pipeline {
namespace {

using model::Finding;
using model::Prediction;
using model::Severity;

model::Finding prediction(const std::string& category, const std::string& file, int line,
                          const std::string& subject, const std::string& stage = "init",
                          model::Severity severity = model::Severity::Error) {
  model::Finding f;
  f.rule = "env-not-set";
  f.category = category;
  f.severity = severity;
  f.phase = model::Phase::Static;
  f.prediction = model::Prediction::Unverified;
  f.stage = stage;
  f.subject = subject;
  f.message = "train.py reads " + subject;
  f.location = {file, line, 0};
  return f;
}

model::Finding failure(const std::string& category, const std::string& file, int line,
                       const std::string& message, const std::string& stage = "init") {
  model::Finding f;
  f.rule = "dry-run";
  f.category = category;
  f.stage = stage;
  f.message = message;
  f.location = {file, line, 0};
  return f;
}

struct DryRun {
  harness::HarnessEvents events;
  RunEvidence evidence;
  explicit DryRun(bool passed) {
    evidence.watched = true;
    evidence.command_passed = passed;
    evidence.events = &events;
    evidence.code_container_dir = "/job/code";
  }
  DryRun& reached(const std::string& file, int line, const std::string& stage = "train") {
    events.reached.push_back({"/job/code/" + file, line, stage});
    return *this;
  }
  DryRun& entered(const std::string& file, int first, int last, const std::string& stage) {
    events.entered.push_back({"/job/code/" + file, first, last, stage});
    return *this;
  }
};

TEST(PipelinePredictions, AFailureAtThePredictedLineIsOneConfirmedFinding) {
  DryRun run(false);
  auto out = settle_predictions({prediction("Key Not Found", "train.py", 5, "WORLD_SIZE")},
                                {failure("Key Not Found", "train.py", 5, "KeyError: 'WORLD_SIZE'")},
                                run.evidence, false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].phase, model::Phase::Dryrun);
  EXPECT_EQ(out[0].prediction, model::Prediction::Confirmed);
  ASSERT_EQ(out[0].predicted.size(), 1u);
  EXPECT_EQ(out[0].predicted[0].location.str(), "train.py:5");
}

TEST(PipelinePredictions, AFailureForThePredictedCauseElsewhereConfirmsToo) {
  DryRun run(false);
  auto out = settle_predictions({prediction("Path Not Found", "train.py", 6, "/home/alice/data/train.csv")},
                                {failure("Path Not Found", "train.py", 11,
                                         "No such file or directory: '/home/alice/data/train.csv'", "data")},
                                run.evidence, false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].prediction, model::Prediction::Confirmed);
  EXPECT_EQ(out[0].stage, "data");
}

TEST(PipelinePredictions, ANameInsideALongerNameDoesNotConfirm) {
  DryRun run(false);
  auto out = settle_predictions({prediction("Key Not Found", "train.py", 5, "RANK")},
                                {failure("Key Not Found", "train.py", 9, "KeyError: 'LOCAL_RANK'")},
                                run.evidence, false);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].prediction, model::Prediction::NotReached);
  EXPECT_EQ(out[1].prediction, model::Prediction::None);
}

TEST(PipelinePredictions, ALineThatRanWithoutFailingRefutesTheRisk) {
  DryRun run(true);
  run.reached("train.py", 5);
  auto out =
      settle_predictions({prediction("Key Not Found", "train.py", 5, "WORLD_SIZE")}, {}, run.evidence, false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].prediction, model::Prediction::Refuted);
  EXPECT_EQ(out[0].severity, model::Severity::Info);
}

TEST(PipelinePredictions, ALineNeverReachedIsAWarningWithTheStageOfItsFunction) {
  DryRun run(true);
  run.entered("train.py", 1, 200, "init").entered("train.py", 40, 60, "evaluate");
  auto out = settle_predictions({prediction("Key Not Found", "train.py", 52, "WORLD_SIZE")}, {}, run.evidence,
                                false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].prediction, model::Prediction::NotReached);
  EXPECT_EQ(out[0].severity, model::Severity::Warning);
  EXPECT_EQ(out[0].stage, "evaluate");
  EXPECT_EQ(out[0].message.rfind("not reached in the dry run; if the job gets there on the platform, ", 0),
            0u)
      << out[0].message;
}

TEST(PipelinePredictions, StrictKeepsAnUnrefutedPredictionAnError) {
  DryRun run(true);
  auto out =
      settle_predictions({prediction("Key Not Found", "train.py", 52, "WORLD_SIZE")}, {}, run.evidence, true);
  EXPECT_EQ(out[0].severity, model::Severity::Error);
  run.reached("train.py", 52);
  out =
      settle_predictions({prediction("Key Not Found", "train.py", 52, "WORLD_SIZE")}, {}, run.evidence, true);
  EXPECT_EQ(out[0].severity, model::Severity::Info);
}

TEST(PipelinePredictions, AStartUpLineIsSettledByItsStep) {
  DryRun run(false);
  run.evidence.has_setup = true;
  run.evidence.setup_exit = 0;
  auto setup_line = prediction("Library Not Found", "job.yaml", 3, "", "setup");
  auto out = settle_predictions({setup_line}, {}, run.evidence, false);
  EXPECT_EQ(out[0].prediction, model::Prediction::Refuted);
  run.evidence.setup_exit = 1;
  out = settle_predictions({setup_line},
                           {failure("Library Not Found", "", 0, "No matching distribution", "setup")},
                           run.evidence, false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].prediction, model::Prediction::Confirmed);
  EXPECT_EQ(out[0].location.str(), "job.yaml:3");  // the line the failure came from
}

TEST(PipelinePredictions, APathThatRanInAJobThatFailedElsewhereStaysOpen) {
  DryRun run(false);
  run.reached("train.py", 6);
  auto out = settle_predictions({prediction("Path Not Found", "train.py", 6, "/home/alice/x")},
                                {failure("Key Not Found", "train.py", 30, "KeyError: 'label'")}, run.evidence,
                                false);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].prediction, model::Prediction::Unverified);
  EXPECT_EQ(out[0].severity, model::Severity::Warning);
}

TEST(PipelinePredictions, CertainErrorsAndAdviceAreNotPredictions) {
  model::Finding certain = prediction("Syntax Error", "train.py", 3, "");
  certain.prediction = model::Prediction::None;
  EXPECT_TRUE(is_certain_error(certain));
  model::Finding risk = prediction("Key Not Found", "train.py", 5, "X");
  EXPECT_FALSE(is_certain_error(risk));
  std::vector<model::Finding> findings = {certain, risk};
  leave_unverified(findings, false);
  EXPECT_EQ(findings[0].severity, model::Severity::Error);
  EXPECT_EQ(findings[1].severity, model::Severity::Warning);
  auto lines = watched_lines(findings);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].str(), "train.py:5");
}

}  // namespace
}  // namespace preflight::pipeline
