// The cost estimate: a measured step's time on the platform's GPU, the length of the real run
// from the clamped epochs, and where a failure of the dry run would strike in it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "diagnosis_fixtures.hpp"
#include "pipeline/estimate.hpp"
#include "test_support.hpp"

namespace preflight::pipeline {
namespace {

using diagnosis::fixtures::philly;

constexpr int kMain = 10;

harness::HarnessEvents trained(int epochs_ended, int batches_per_epoch = 500) {
  harness::HarnessEvents events;
  events.main_pid = kMain;
  harness::StepMeasure step;
  step.seconds = 0.5;
  step.flops = 3.72e12;  // 1 s at 40% of 9.3 TFLOPS
  step.ops = 200;
  step.batch_size = 64;
  step.batches_per_epoch = batches_per_epoch;
  step.pid = kMain;
  events.steps = {step};
  for (int i = 0; i < epochs_ended; ++i) events.epochs.push_back({2, 1.0 + i, kMain});
  return events;
}

model::PlatformFacts p100s(int gpus) {
  model::PlatformFacts facts = philly();
  facts.gpus = gpus;
  facts.gpu_name = "Tesla P100-PCIE-16GB";
  facts.gpu_memory_bytes = 16ull << 30;
  facts.gpu_tflops = 9.3;
  return facts;
}

report::Clamp epochs_clamp(int original, int value = 2) {
  return {"argparse --epochs", original, value, {}, "epochs"};
}

model::Finding failure_in(const std::string& stage, const std::string& category = "Key Not Found") {
  model::Finding finding;
  finding.category = category;
  finding.severity = model::Severity::Error;
  finding.stage = stage;
  return finding;
}

harness::ExceptionEvent raised_in(const std::string& stage, double t) {
  harness::ExceptionEvent event;
  event.stage = stage;
  event.t = t;
  event.pid = kMain;
  return event;
}

spec::JobSpec limited_to(std::chrono::seconds limit) {
  spec::JobSpec job;
  job.code_dir = "/home/u/job";
  job.time_limit = limit;
  job.time_limit_where = {"/home/u/job/train.sbatch", 4, 9};
  return job;
}

TEST(PipelineEstimate, ARunLongerThanTheTimeLimitIsAWarningAtTheLimit) {
  // 90 epochs of 500 steps of 1 s on a P100: 12.5 h.
  auto estimate = estimate_run(trained(2), {epochs_clamp(90)}, {}, p100s(1));
  ASSERT_TRUE(estimate && estimate->run_hours);
  std::vector<std::string> notes;
  auto finding = time_limit_finding(*estimate, limited_to(std::chrono::hours(10)), notes);
  ASSERT_TRUE(finding.has_value());
  EXPECT_EQ(finding->rule, "time-limit");
  EXPECT_EQ(finding->severity, model::Severity::Warning);
  EXPECT_EQ(finding->stage, "train");
  EXPECT_EQ(finding->location.str(), "train.sbatch:4:9");
  EXPECT_NE(finding->message.find("the job's time limit is 10.0 h"), std::string::npos) << finding->message;
  EXPECT_NE(finding->message.find("after about 36000 of its 45000 training steps, in epoch 73 of 90"),
            std::string::npos)
      << finding->message;
  EXPECT_TRUE(notes.empty());

  EXPECT_FALSE(time_limit_finding(*estimate, limited_to(std::chrono::hours(13)), notes).has_value());
  EXPECT_FALSE(time_limit_finding(*estimate, spec::JobSpec{}, notes).has_value());
  EXPECT_TRUE(notes.empty());
}

// Evidence before verdict: a limit is compared only with a run whose length is known on the
// platform; otherwise the report says why it was not.
TEST(PipelineEstimate, ATimeLimitThatCannotBeComparedIsANote) {
  model::PlatformFacts no_tflops = p100s(1);
  no_tflops.gpu_tflops = 0;
  auto unknown_gpu = estimate_run(trained(2), {epochs_clamp(90)}, {}, no_tflops);
  ASSERT_TRUE(unknown_gpu.has_value());
  std::vector<std::string> notes;
  EXPECT_FALSE(time_limit_finding(*unknown_gpu, limited_to(std::chrono::minutes(1)), notes).has_value());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "train.sbatch:4:9: the time limit (60 s) was not compared with the run: the profile gives no "
            "gpu.tflops, so the step's time on the platform is unknown");

  harness::HarnessEvents uncounted = trained(0);
  uncounted.steps[0].batches_per_epoch.reset();
  auto no_steps = estimate_run(uncounted, {}, {}, p100s(1));
  ASSERT_TRUE(no_steps.has_value());
  EXPECT_FALSE(time_limit_finding(*no_steps, limited_to(std::chrono::minutes(1)), notes).has_value());
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[1].find("the run's number of steps could not be told"), std::string::npos) << notes[1];
}

// A job with no end of its own has no length to project: its pace, and the time limit as
// where it ends. The iterators it went through again and again are no epochs.
TEST(PipelineEstimate, AJobWithNoEndHasAPaceAndNoLength) {
  harness::HarnessEvents events = trained(74, 625000000);
  events.endless.push_back({150, 50, std::nullopt, std::nullopt, "", kMain});
  auto estimate = estimate_run(events, {}, {}, p100s(1));
  ASSERT_TRUE(estimate.has_value());
  ASSERT_TRUE(estimate->steps_per_hour.has_value());
  EXPECT_NEAR(*estimate->steps_per_hour, 3600 / estimate->iteration_seconds, 1e-6);
  EXPECT_FALSE(estimate->total_steps.has_value());
  EXPECT_FALSE(estimate->run_hours.has_value());
  EXPECT_FALSE(estimate->epochs.has_value());
  std::vector<std::string> notes;
  EXPECT_FALSE(time_limit_finding(*estimate, limited_to(std::chrono::hours(2)), notes).has_value());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            fmt::format("train.sbatch:4:9: the platform stops the job at its time limit (2.0 h), after "
                        "about {:.0f} training steps",
                        *estimate->steps_per_hour * 2));
}

TEST(PipelineEstimate, NothingWithoutAMeasuredStep) {
  EXPECT_FALSE(estimate_run({}, {}, {}, p100s(1)).has_value());
}

TEST(PipelineEstimate, TheStepOnTheGpuFollowsItsFlopsAndTheRunItsUnclampedEpochs) {
  auto estimate = estimate_run(trained(2), {epochs_clamp(90)}, {}, p100s(4));
  ASSERT_TRUE(estimate.has_value());
  EXPECT_DOUBLE_EQ(estimate->step_seconds_here, 0.5);
  EXPECT_NEAR(estimate->step_seconds, 1.0, 1e-9);
  EXPECT_EQ(estimate->total_steps, 90 * 500);
  EXPECT_NEAR(*estimate->run_hours, 90 * 500 / 3600.0, 1e-9);
  EXPECT_EQ(estimate->gpus, 4);
  EXPECT_FALSE(estimate->failure_stage.has_value());
}

TEST(PipelineEstimate, ARunCountedInStepsIsNotTheDryRunsEpochs) {
  // nanoGPT's style: `while iter_num < max_iters`, each pass of the dry run through a DataLoader
  // of 325 batches an epoch of its own: 10 of them, against 600000 steps of the real run.
  report::Clamp steps = {"argparse --max-iters", 600000, 10, {}, "steps"};
  auto estimate = estimate_run(trained(10, 325), {steps}, {}, p100s(1));
  ASSERT_TRUE(estimate.has_value());
  EXPECT_EQ(estimate->total_steps, 600000);
  EXPECT_FALSE(estimate->epochs.has_value());
  // Without a step count, the epochs the dry run went through are the run's.
  auto by_epochs = estimate_run(trained(3, 325), {}, {}, p100s(1));
  ASSERT_TRUE(by_epochs.has_value());
  EXPECT_EQ(by_epochs->epochs, 3.0);
  EXPECT_EQ(by_epochs->total_steps, 3 * 325);
}

TEST(PipelineEstimate, ASmallModelIsBoundByKernelLaunches) {
  harness::HarnessEvents events = trained(2);
  events.steps[0].flops = 1e6;
  auto estimate = estimate_run(events, {}, {}, p100s(1));
  EXPECT_NEAR(estimate->step_seconds, 200 * kSecondsPerOperator, 1e-12);
}

TEST(PipelineEstimate, WithoutGpusTheTimeMeasuredHereCounts) {
  auto estimate = estimate_run(trained(2), {epochs_clamp(10)}, {}, p100s(0));
  EXPECT_DOUBLE_EQ(estimate->step_seconds, 0.5);
  EXPECT_EQ(estimate->gpus, 0);
}

TEST(PipelineEstimate, AFailureAfterTheLastEpochStrikesAtTheEndOfTheRealRun) {
  harness::HarnessEvents events = trained(2);
  events.exceptions = {raised_in("evaluate", 9.0)};
  auto estimate = estimate_run(events, {epochs_clamp(90)}, {failure_in("evaluate")}, p100s(4));
  EXPECT_EQ(estimate->failure_stage, "evaluate");
  EXPECT_EQ(estimate->failure_after_steps, 90 * 500);
  EXPECT_NEAR(*estimate->gpu_hours_saved, 90 * 500 / 3600.0 * 4, 1e-9);
}

TEST(PipelineEstimate, AFailureInTheFirstValidationStrikesAfterOneEpoch) {
  harness::HarnessEvents events = trained(2);
  events.exceptions = {raised_in("validate", 1.5)};  // after the first epoch ended, at t=1
  auto estimate = estimate_run(events, {epochs_clamp(90)}, {failure_in("validate")}, p100s(1));
  EXPECT_EQ(estimate->failure_after_steps, 500);
}

// A checkpoint every 500 steps, brought forward to every 2 (periodic.py): the save that failed
// within the first epoch of the dry run comes after 500 steps on the platform.
TEST(PipelineEstimate, AFailureInPeriodicWorkBroughtForwardStrikesAtTheJobsOwnInterval) {
  harness::HarnessEvents events = trained(2);
  events.exceptions = {raised_in("checkpoint", 0.5)};  // before the first epoch ended, at t=1
  report::Clamp save{"config.save_every", 500, 2, {}, "interval"};
  report::Clamp log{"argparse --log-interval", 100, 2, {}, "interval"};
  auto estimate =
      estimate_run(events, {log, save}, {failure_in("checkpoint", "Permission Denied")}, p100s(1));
  EXPECT_EQ(estimate->failure_after_steps, 500);
  report::Clamp eval{"argparse --eval-interval", 250, 2, {}, "interval"};
  events.exceptions = {raised_in("validate", 0.5)};
  estimate = estimate_run(events, {log, save, eval}, {failure_in("validate")}, p100s(1));
  EXPECT_EQ(estimate->failure_after_steps, 250);
  // After an epoch ended, the epochs place it, as before.
  events.exceptions = {raised_in("validate", 1.5)};
  estimate = estimate_run(events, {epochs_clamp(90), eval}, {failure_in("validate")}, p100s(1));
  EXPECT_EQ(estimate->failure_after_steps, 500);
}

TEST(PipelineEstimate, ANaNLossStrikesAtItsStepWithinTheEpoch) {
  harness::HarnessEvents events = trained(2);
  harness::NonfiniteEvent nan;
  nan.step = 3;  // the first batch of the second epoch (two batches per dry-run epoch)
  nan.t = 1.5;
  nan.pid = kMain;
  events.nonfinite = {nan};
  auto estimate = estimate_run(events, {epochs_clamp(90)}, {failure_in("train", "Loss NaN")}, p100s(1));
  EXPECT_EQ(estimate->failure_after_steps, 501);
}

TEST(PipelineEstimate, FailuresBeforeTrainingAndGpuOutOfMemoryStrikeAtOnce) {
  auto estimate = estimate_run(trained(2), {}, {failure_in("data", "Path Not Found")}, p100s(1));
  EXPECT_EQ(estimate->failure_after_steps, 0);
  estimate = estimate_run(trained(2), {}, {failure_in("train", "GPU Out of Memory")}, p100s(1));
  EXPECT_EQ(estimate->failure_after_steps, 1);
}

TEST(PipelineEstimate, AStepCountClampGivesTheRunsLength) {
  harness::HarnessEvents events = trained(1);
  events.exceptions = {raised_in("evaluate", 9.0)};
  report::Clamp steps{"transformers TrainingArguments.max_steps", 20000, 2, {}, "steps"};
  auto estimate = estimate_run(events, {steps}, {failure_in("evaluate")}, p100s(1));
  EXPECT_EQ(estimate->total_steps, 20000);
  EXPECT_EQ(estimate->failure_after_steps, 20000);
}

TEST(PipelineEstimate, AStepCountTheHarnessKeptGivesTheRunsLengthEvenWhenItEndedTheJob) {
  // `while step < args.max_steps:` as the module's last statement: no loop cut could count it,
  // and the harness ended the job once its steps repeated; --max-steps 2000000 is its length.
  harness::HarnessEvents events = trained(1);
  events.counts = {{"argparse --max-steps", "steps", 2000000, std::nullopt, kMain}};
  events.endless = {{150, 50, std::nullopt, std::nullopt, "while loop", kMain}};
  auto estimate = estimate_run(events, {}, {}, p100s(1));
  EXPECT_EQ(estimate->total_steps, 2000000);
  EXPECT_FALSE(estimate->steps_per_hour);
  EXPECT_TRUE(estimate->run_hours);
}

// The measured step with its parts: one linear layer of 1 TFLOP.
harness::HarnessEvents trained_with_parts() {
  auto events = trained(2);
  harness::StepParts parts;
  parts.pid = kMain;
  harness::StepPart linear;
  linear.kind = "layer";
  linear.name = "torch.nn.Linear";
  linear.calls = 1;
  linear.flops = 1e12;
  linear.bytes = 1e6;
  linear.grad = true;
  linear.has_parameters = true;
  linear.dtype = "float32";
  parts.parts = {linear};
  events.step_parts = {parts};
  return events;
}

TEST(PipelineEstimate, OnAGpuOfTheTableTheStepIsBuiltFromItsPartsAndWaitsForItsData) {
  auto table = estimate::load_gpu_table(testing::source_dir() / "policies" / "gpus.yaml");
  ASSERT_TRUE(table) << table.error().str();
  const auto events = trained_with_parts();
  auto estimate = estimate_run(events, {epochs_clamp(90)}, {}, p100s(1), DataPace{5.0, 0}, &*table);
  ASSERT_TRUE(estimate && estimate->projection);
  const auto& projection = *estimate->projection;
  EXPECT_EQ(projection.gpu, "Tesla P100-PCIE-16GB");
  EXPECT_DOUBLE_EQ(estimate->step_seconds, projection.compute_typical);
  // Loading in the training process: each iteration computes, then waits 5 s for its batch.
  EXPECT_DOUBLE_EQ(estimate->iteration_seconds, projection.compute_typical + 5.0);
  EXPECT_EQ(projection.bound, "input");
  ASSERT_TRUE(estimate->total_steps && estimate->run_hours);
  EXPECT_NEAR(*estimate->run_hours, *estimate->total_steps * estimate->iteration_seconds / 3600, 1e-9);
  EXPECT_EQ(estimate->step_basis, projection.basis);

  // A GPU the table lacks: the FLOPs at 40% of the profile's peak, as before.
  auto unknown = p100s(1);
  unknown.gpu_name = "Imaginary GPU";
  estimate = estimate_run(events, {epochs_clamp(90)}, {}, unknown, std::nullopt, &*table);
  ASSERT_TRUE(estimate);
  EXPECT_FALSE(estimate->projection);
  EXPECT_NEAR(estimate->step_seconds, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(estimate->iteration_seconds, estimate->step_seconds);
}

}  // namespace
}  // namespace preflight::pipeline
