// Findings about what happened during a run: a loss that turned NaN (the harness's
// `nonfinite` event), an error even when the job carried on and exited 0 and told once when
// the job also died of it; and a measured training step too large for the platform's GPU.
#include <gtest/gtest.h>

#include "diagnosis/during_run.hpp"
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
model::RunOutcome diverged(int step) {
  model::RunOutcome outcome;
  outcome.exit_code = 0;
  outcome.events.started = true;
  outcome.events.command_started = true;
  outcome.events.main_pid = 10;
  outcome.events.stages = {{"train", 0.5, 10, "loss.backward()", std::nullopt}};
  outcome.events.nonfinite = {nan_at(step)};
  return outcome;
}

TEST(DiagnosisLossNaN, AJobThatCarriesOnAfterANaNLossFails) {
  model::Finding finding = only_finding(diverged(3));
  EXPECT_EQ(finding.category, "Loss NaN");
  EXPECT_EQ(finding.dimension, "Deep Learning Specific");
  EXPECT_EQ(finding.root_cause, "Inappropriate Model Parameter/Structure");
  EXPECT_EQ(finding.rule, "loss-nan");
  EXPECT_EQ(finding.severity, model::Severity::Error);
  EXPECT_EQ(finding.retry, model::Retry::Useless);
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
  model::RunOutcome outcome = diverged(1);
  outcome.events.nonfinite = {nan_at(1, 10, "inf")};
  EXPECT_TRUE(contains(only_finding(outcome).message, "infinite at training step 1"));
}

TEST(DiagnosisLossNaN, NotRepeatedWhenTheJobThenDiedOfIt) {
  model::RunOutcome outcome = crashed("RuntimeError", "loss is nan, stopping", "train");
  outcome.events.main_pid = 10;
  outcome.events.nonfinite = {nan_at(4)};
  model::Finding finding = only_finding(outcome);
  EXPECT_EQ(finding.category, "Loss NaN");
  EXPECT_TRUE(contains(finding.message, "step 4")) << finding.message;
  EXPECT_FALSE(contains(finding.message, "exited 0")) << finding.message;
}

TEST(DiagnosisLossNaN, NotRepeatedWhenALossNaNLineEndedTheJob) {
  model::RunOutcome outcome = diverged(2);
  outcome.exit_code = 1;
  outcome.output = {line("step 3 loss: nan", false, model::OutputLine::Stream::Stdout)};
  EXPECT_EQ(only_finding(outcome).category, "Loss NaN");
}

TEST(DiagnosisLossNaN, ComesBeforeAnotherFailureItLikelyCaused) {
  model::RunOutcome outcome = crashed("ValueError", "Input contains NaN.", "evaluate");
  outcome.events.main_pid = 10;
  outcome.events.nonfinite = {nan_at(2)};
  std::vector<model::Finding> findings = diagnose(testing::shipped_policies(), outcome, philly());
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].category, "Loss NaN");
  EXPECT_EQ(findings[0].stage, "train");
  EXPECT_EQ(findings[1].stage, "evaluate");
  EXPECT_NE(findings[1].category, "Loss NaN");
}

TEST(DiagnosisLossNaN, TheMainProcessIsPreferredAndLibraryFramesAreNotALocation) {
  model::RunOutcome outcome = diverged(5);
  harness::NonfiniteEvent other = nan_at(1, 11);
  outcome.events.nonfinite = {other, nan_at(5)};
  outcome.events.nonfinite[1].where = library_frame();
  model::Finding finding = only_finding(outcome);
  EXPECT_TRUE(contains(finding.message, "step 5")) << finding.message;
  EXPECT_FALSE(finding.location.known());
}

harness::StepMeasure step_of(std::uint64_t live, std::uint64_t step_bytes, int batch = 64) {
  harness::StepMeasure step;
  step.seconds = 0.2;
  step.live_bytes = live;
  step.step_bytes = step_bytes;
  step.batch_size = batch;
  step.pid = 10;
  step.where = user_frame("/job/code/train.py", 58);
  return step;
}

model::PlatformFacts with_gpus(int gpus, std::uint64_t memory = 2ull << 30) {
  model::PlatformFacts facts = philly();
  facts.gpus = gpus;
  facts.gpu_name = "Quadro P620";
  facts.gpu_memory_bytes = memory;
  return facts;
}

model::RunOutcome trained(std::vector<harness::StepMeasure> steps) {
  model::RunOutcome outcome = diverged(1);
  outcome.events.nonfinite.clear();
  outcome.events.steps = std::move(steps);
  return outcome;
}

constexpr std::uint64_t MiB = 1ull << 20;

TEST(DiagnosisGpuMemory, AStepLargerThanTheGpuIsAPredictedOutOfMemory) {
  model::Finding finding = only_finding(trained({step_of(100 * MiB, 2000 * MiB, 24)}), with_gpus(1));
  EXPECT_EQ(finding.category, "GPU Out of Memory");
  EXPECT_EQ(finding.stage, "train");
  EXPECT_EQ(finding.severity, model::Severity::Error);
  EXPECT_EQ(finding.location.str(), "train.py:58");
  // 100 MiB kept + 2000 MiB for the step + 400 MiB of CUDA context + 20 MiB of cuBLAS workspace.
  EXPECT_TRUE(contains(finding.message, "2.5 GiB")) << finding.message;
  EXPECT_TRUE(contains(finding.message, "batch size 24")) << finding.message;
  EXPECT_TRUE(contains(finding.message, "Quadro P620 has 2.0 GiB")) << finding.message;
  EXPECT_TRUE(contains(finding.hint, "At batch size 12 the step needs about 1.5 GiB")) << finding.hint;
}

TEST(DiagnosisGpuMemory, WhenWhatIsKeptAloneIsTooMuchNoBatchFitsAndShardingIsCounted) {
  // 100 GiB of weights, gradients and Adam's moments and 18 GiB of activations on an 80 GiB GPU.
  model::Finding finding =
      only_finding(trained({step_of(100ull << 30, 18ull << 30, 1)}), with_gpus(1, 80ull << 30));
  EXPECT_TRUE(contains(finding.hint, "alone take 100.0 GiB")) << finding.hint;
  EXPECT_FALSE(contains(finding.hint, "At batch size")) << finding.hint;
  // Over 2 GPUs: 50 + 18 GiB + 420 MiB.
  EXPECT_TRUE(contains(finding.hint, "over 2 GPUs each needs about 68.4 GiB")) << finding.hint;
  // Activations alone too large: no count of GPUs is offered.
  finding = only_finding(trained({step_of(100ull << 30, 90ull << 30, 1)}), with_gpus(1, 80ull << 30));
  EXPECT_TRUE(contains(finding.hint, "alone take 100.0 GiB")) << finding.hint;
  EXPECT_FALSE(contains(finding.hint, "GPUs each")) << finding.hint;
}

TEST(DiagnosisGpuMemory, ACardsMeasuredFrameworkReplacesTheDefault) {
  // The GPU table's `framework` for the card (an H200's 610 MiB context and two 32 MiB
  // workspaces), in the need and in the hint's sharded figure alike.
  model::PlatformFacts facts = with_gpus(1, 80ull << 30);
  facts.gpu_framework_bytes = 674 * MiB;
  EXPECT_EQ(framework_bytes(facts), 674 * MiB);
  auto need = gpu_memory_need(trained({step_of(100 * MiB, 1000 * MiB)}).events, facts);
  ASSERT_TRUE(need.has_value());
  EXPECT_EQ(need->needed_bytes, 100 * MiB + 1000 * MiB + 674 * MiB);
  EXPECT_EQ(need->kept_bytes, 100 * MiB + 674 * MiB);
  EXPECT_EQ(framework_bytes(with_gpus(1)), kFrameworkBytes);  // a card not measured
}

TEST(DiagnosisGpuMemory, TheFrameworkAddsItsContextAndTwoCublasWorkspacesInOneSegment) {
  // Two 8.125 MiB workspaces (PyTorch's default for cards before Hopper) share one 20 MiB
  // segment of the caching allocator.
  EXPECT_EQ(kCublasWorkspaceBytes, 8519680u);
  EXPECT_EQ(kFrameworkBytes, 420 * MiB);
  auto need = gpu_memory_need(trained({step_of(0, 0)}).events, with_gpus(1));
  ASSERT_TRUE(need.has_value());
  EXPECT_EQ(need->needed_bytes, 420 * MiB);
}

TEST(DiagnosisGpuMemory, AStepThatFitsIsNoFindingAndNeitherIsAJobWithoutGpus) {
  EXPECT_TRUE(
      diagnose(testing::shipped_policies(), trained({step_of(100 * MiB, 1000 * MiB)}), with_gpus(1)).empty());
  EXPECT_TRUE(
      diagnose(testing::shipped_policies(), trained({step_of(100 * MiB, 9000 * MiB)}), with_gpus(0)).empty());
}

TEST(DiagnosisGpuMemory, DataParallelSplitsTheStepAndTheLargestProcessCounts) {
  harness::StepMeasure split = step_of(100 * MiB, 4000 * MiB);
  split.replicas = 4;
  auto need = gpu_memory_need(trained({split}).events, with_gpus(4));
  ASSERT_TRUE(need.has_value());
  EXPECT_EQ(need->needed_bytes, 100 * MiB + 1000 * MiB + kFrameworkBytes);
  harness::StepMeasure rank1 = step_of(100 * MiB, 3000 * MiB);
  rank1.pid = 11;
  need = gpu_memory_need(trained({step_of(100 * MiB, 1000 * MiB), rank1}).events, with_gpus(2, 16ull << 30));
  EXPECT_EQ(need->needed_bytes, 3100 * MiB + kFrameworkBytes);
}

TEST(DiagnosisGpuMemory, ComesBeforeANaNLoss) {
  model::RunOutcome outcome = trained({step_of(0, 3000 * MiB)});
  outcome.events.nonfinite = {nan_at(3)};
  std::vector<model::Finding> findings = diagnose(testing::shipped_policies(), outcome, with_gpus(1));
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].category, "GPU Out of Memory");
  EXPECT_EQ(findings[1].category, "Loss NaN");
}

}  // namespace
}  // namespace preflight::diagnosis
