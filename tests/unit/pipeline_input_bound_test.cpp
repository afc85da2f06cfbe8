// Whether training steps would wait for their data on the platform's GPU (issue 13).
#include <gtest/gtest.h>

#include "pipeline/input_bound.hpp"

namespace preflight {
namespace {

constexpr double kStarted = 1700000000.0;
constexpr int kPid = 9;

harness::HarnessEvents training_from(double train_at) {
  harness::HarnessEvents events;
  events.main_pid = kPid;
  events.processes.push_back({kPid, false, kStarted, std::nullopt});
  events.stages.push_back({"data", 0.5, kPid, "", {}});
  events.stages.push_back({"train", train_at, kPid, "", {}});
  return events;
}

harness::TraceRecord batch(double at, double wait, int index, int pid = kPid) {
  harness::TraceRecord record;
  record.name = "next batch";
  record.category = "data";
  record.ts = static_cast<std::int64_t>((kStarted + at) * 1e6);
  record.dur = static_cast<std::int64_t>(wait * 1e6);
  record.pid = pid;
  record.tid = pid;
  record.args = {{"index", index}, {"loader", "ImageFolder"}};
  return record;
}

harness::TraceRecord fetch(double at, double seconds, int pid) {
  auto record = batch(at, seconds, 0, pid);
  record.name = "fetch batch";
  record.args = {{"items", 16}};
  return record;
}

TEST(PipelineInputBound, ThePaceIsAWorkersFetchSharedByTheWorkers) {
  const auto events = training_from(1.0);
  harness::HarnessTrace trace;
  auto first = batch(1.1, 0.5, 1);
  first.args["workers"] = 2;
  trace.records.push_back(first);
  trace.records.push_back(fetch(0.7, 9.0, 20));   // before training: not the training loop's
  trace.records.push_back(fetch(1.2, 0.10, 20));  // two workers, each 0.1 s a batch
  trace.records.push_back(fetch(1.3, 0.12, 21));
  trace.records.push_back(fetch(1.4, 0.08, 20));
  const auto pace = pipeline::data_pace(events, trace);
  ASSERT_TRUE(pace);
  EXPECT_NEAR(pace->seconds, 0.05, 1e-6);
  EXPECT_EQ(pace->workers, 2);
}

TEST(PipelineInputBound, WithoutFetchesThePaceIsTheMedianWaitAfterEachLoopsFirst) {
  const auto events = training_from(1.0);
  harness::HarnessTrace trace;
  trace.records.push_back(batch(0.6, 5.0, 1));  // before training
  trace.records.push_back(batch(1.1, 3.0, 1));  // a loop's first: its workers starting
  trace.records.push_back(batch(1.5, 0.10, 2));
  trace.records.push_back(batch(1.7, 0.30, 3));
  trace.records.push_back(batch(2.0, 0.20, 2));
  trace.records.push_back(batch(2.1, 9.0, 2, 77));  // another process
  auto end = batch(2.5, 7.0, 4);
  end.args["end"] = "cap";
  trace.records.push_back(end);
  const auto pace = pipeline::data_pace(events, trace);
  ASSERT_TRUE(pace);
  EXPECT_NEAR(pace->seconds, 0.20, 1e-6);
}

TEST(PipelineInputBound, NoTrainingBatchNoPace) {
  const auto events = training_from(1.0);
  harness::HarnessTrace trace;
  trace.records.push_back(batch(0.6, 5.0, 2));
  EXPECT_FALSE(pipeline::data_pace(events, trace));
}

report::Estimate estimate(double data, double platform_step) {
  report::Estimate e;
  e.step_seconds_here = 0.5;
  e.step_seconds = platform_step;
  e.data_seconds = data;
  return e;
}

model::PlatformFacts gpu_platform() {
  model::PlatformFacts facts;
  facts.gpus = 1;
  facts.gpu_name = "Tesla P100-PCIE-16GB";
  facts.gpu_tflops = 9.3;
  facts.code_container_dir = "/job/code";
  return facts;
}

TEST(PipelineInputBound, AStepThatComputesFasterThanItsBatchesComeIsAWarning) {
  auto events = training_from(1.0);
  harness::CapEvent cap;
  cap.what = "DataLoader";
  cap.where = harness::Frame{"/job/code/train.py", 41, "main", true};
  events.caps.push_back(cap);
  const auto finding = pipeline::input_bound_finding(estimate(0.12, 0.011), gpu_platform(), events);
  ASSERT_TRUE(finding);
  EXPECT_EQ(finding->rule, "input-bound");
  EXPECT_EQ(finding->severity, model::Severity::Warning);
  EXPECT_EQ(finding->stage, "train");
  EXPECT_EQ(finding->location.str(), "train.py:41");
  EXPECT_NE(finding->message.find("compute for 11.0 ms, but the DataLoader delivers a batch every 120.0 ms"),
            std::string::npos)
      << finding->message;
}

TEST(PipelineInputBound, ComputeBoundNoiseAndNoGpuAreNotWarnings) {
  const auto events = training_from(1.0);
  EXPECT_FALSE(pipeline::input_bound_finding(estimate(0.010, 0.011), gpu_platform(), events));
  EXPECT_FALSE(pipeline::input_bound_finding(estimate(0.004, 0.001), gpu_platform(), events));
  auto cpu = gpu_platform();
  cpu.gpus = 0;
  EXPECT_FALSE(pipeline::input_bound_finding(estimate(0.12, 0.011), cpu, events));
  report::Estimate unmeasured = estimate(0.12, 0.011);
  unmeasured.data_seconds.reset();
  EXPECT_FALSE(pipeline::input_bound_finding(unmeasured, gpu_platform(), events));
}

}  // namespace
}  // namespace preflight
