// Stage statuses in the report from the harness's stage events and the failing stage.
#include <gtest/gtest.h>

#include <map>

#include "pipeline/stages.hpp"

namespace preflight {
namespace {

std::map<std::string, std::string> statuses(const std::vector<report::StageResult>& results) {
  std::map<std::string, std::string> out;
  for (const auto& r : results) out[r.name] = r.status;
  return out;
}

harness::HarnessEvents events_through(std::initializer_list<const char*> stages) {
  harness::HarnessEvents events;
  events.started = events.command_started = true;
  events.main_pid = 7;
  double t = 0.1;
  for (const char* stage : stages) events.stages.push_back({stage, t += 0.5, 7, "", {}});
  return events;
}

TEST(PipelineStages, PassingJobMarksEnteredStagesPassedAndTheRestAbsent) {
  auto results = pipeline::stage_results(
      events_through({"data", "model", "train", "validate", "train", "evaluate"}), std::nullopt, false, 0, 5);
  auto s = statuses(results);
  EXPECT_EQ(results.size(), 9u);
  EXPECT_EQ(s["setup"], "absent");
  EXPECT_EQ(s["init"], "passed");
  EXPECT_EQ(s["train"], "passed");
  EXPECT_EQ(s["evaluate"], "passed");
  EXPECT_EQ(s["checkpoint"], "absent");
  EXPECT_EQ(s["predict"], "absent");
  EXPECT_NEAR(results[4].seconds, 1.0, 1e-9);  // train: two stretches of 0.5 s
}

TEST(PipelineStages, StagesAfterTheFailureAreNotReached) {
  auto s = statuses(pipeline::stage_results(events_through({"data", "model", "train", "checkpoint"}),
                                            std::string("checkpoint"), true, 2.0, 5));
  EXPECT_EQ(s["setup"], "passed");
  EXPECT_EQ(s["train"], "passed");
  EXPECT_EQ(s["validate"], "absent");
  EXPECT_EQ(s["checkpoint"], "failed");
  EXPECT_EQ(s["evaluate"], "not_reached");
  EXPECT_EQ(s["predict"], "not_reached");
}

TEST(PipelineStages, ProcessesOneAfterAnotherMakeOneTimeline) {
  // `python train.py && python predict.py`: the second process's stages count too; a
  // DataLoader worker spawned beside the first does not.
  harness::HarnessEvents events;
  events.started = events.command_started = true;
  events.main_pid = 7;
  events.processes = {{7, false, 100.0, 3.0}, {8, false, 100.5, 1.0}, {9, false, 104.0, 2.0}};
  events.stages = {{"train", 1.0, 7, "", {}},
                   {"checkpoint", 2.5, 7, "", {}},
                   {"validate", 0.2, 8, "", {}},
                   {"predict", 0.5, 9, "", {}}};
  auto results = pipeline::stage_results(events, std::nullopt, false, 0, 6.0);
  auto s = statuses(results);
  EXPECT_EQ(s["train"], "passed");
  EXPECT_EQ(s["checkpoint"], "passed");
  EXPECT_EQ(s["validate"], "absent");
  EXPECT_EQ(s["predict"], "passed");
  EXPECT_NEAR(results[1].seconds, 1.0 + 0.5, 1e-9);  // init: 1 s in train.py, 0.5 s in predict.py
  EXPECT_NEAR(results[6].seconds, 0.5, 1e-9);        // checkpoint until train.py exited
  EXPECT_NEAR(results[8].seconds, 1.5, 1e-9);        // predict until the container ended
}

TEST(PipelineStages, SetupFailureLeavesEveryLaterStageNotReached) {
  harness::HarnessEvents none;
  auto s = statuses(pipeline::stage_results(none, std::string("setup"), true, 1.0, 1.0));
  EXPECT_EQ(s["setup"], "failed");
  EXPECT_EQ(s["init"], "not_reached");
  EXPECT_EQ(s["predict"], "not_reached");
}

}  // namespace
}  // namespace preflight
