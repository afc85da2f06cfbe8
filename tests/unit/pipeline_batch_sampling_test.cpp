#include <gtest/gtest.h>

#include "pipeline/batch_sampling.hpp"

namespace preflight::pipeline {
namespace {

constexpr const char* kCode = "/job/code";

harness::Frame user_frame(int line) { return {"/job/code/train.py", line, "main", true}; }

model::Finding failure(const std::string& category, const std::string& stage, int line) {
  model::Finding finding;
  finding.category = category;
  finding.stage = stage;
  finding.location = {"train.py", line, 0};
  return finding;
}

// A run whose training loop (train.py:40) was sampled from 32 to 2.
harness::HarnessEvents sampled_run() {
  harness::HarnessEvents events;
  harness::ClampEvent clamp;
  clamp.what = "DataLoader batch";
  clamp.kind = "batch";
  clamp.original = "32";
  clamp.value = "2";
  events.clamps.push_back(clamp);
  harness::FullSizeCheck check;
  check.reached = "step";
  check.batch = 32;
  check.sampled = 2;
  check.where = user_frame(40);
  events.full_size.push_back(check);
  return events;
}

harness::ExceptionEvent exception_at(int line, const std::string& type = "RuntimeError") {
  harness::ExceptionEvent exception;
  exception.type = type;
  exception.frames.push_back(user_frame(line));
  return exception;
}

TEST(PipelineBatchSampling, AShapeFailureTheFullSizeIterationPassedIsRunAgain) {
  const auto events = sampled_run();
  auto why = unconfirmed_at_full_size({failure("Tensor Mismatch", "train", 37)}, events, kCode);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("batches of 2 (sampled from the job's 32)"), std::string::npos) << *why;
  EXPECT_NE(why->find("Tensor Mismatch at train.py:37"), std::string::npos) << *why;
  EXPECT_NE(why->find("did not show"), std::string::npos) << *why;
}

TEST(PipelineBatchSampling, AFailureTheFullSizeIterationMetAtTheSameLineStands) {
  auto events = sampled_run();
  events.full_size[0].reached = "exception";
  events.full_size[0].exception = exception_at(37);
  const std::vector<model::Finding> findings = {failure("Tensor Mismatch", "train", 37)};
  EXPECT_FALSE(unconfirmed_at_full_size(findings, events, kCode).has_value());
  const auto notes = full_size_notes(findings, events, kCode);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("fails at the job's own batch size of 32 too"), std::string::npos) << notes[0];
}

TEST(PipelineBatchSampling, AShapeOnlyLimitConfirmsNothing) {
  auto events = sampled_run();
  events.full_size[0].reached = "exception";
  events.full_size[0].exception =
      exception_at(37, "torch._subclasses.fake_tensor.DynamicOutputShapeException");
  events.full_size[0].shape_only_limit = true;
  auto why = unconfirmed_at_full_size({failure("Tensor Mismatch", "train", 37)}, events, kCode);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("shape-only tensors could not check"), std::string::npos) << *why;
}

TEST(PipelineBatchSampling, FailuresThatDoNotDependOnTheBatchStand) {
  const auto events = sampled_run();
  EXPECT_FALSE(unconfirmed_at_full_size({failure("Permission Denied", "checkpoint", 60)}, events, kCode));
  EXPECT_FALSE(unconfirmed_at_full_size({failure("Path Not Found", "predict", 80)}, events, kCode));
  // The GPU's memory is modelled at the job's own batch size already.
  EXPECT_FALSE(unconfirmed_at_full_size({failure("GPU Out of Memory", "train", 68)}, events, kCode));
  EXPECT_TRUE(unconfirmed_at_full_size({failure("Unclassified", "train", 61)}, events, kCode));
  // Before the sampled batches, nothing was sampled yet.
  EXPECT_FALSE(unconfirmed_at_full_size({failure("Tensor Mismatch", "data", 20)}, events, kCode));
}

TEST(PipelineBatchSampling, WithoutASampledBatchNothingIsRunAgain) {
  auto events = sampled_run();
  events.clamps.clear();
  events.full_size[0].sampled.reset();
  events.full_size[0].made_up.push_back({"a value read (item)", user_frame(52)});
  const std::vector<model::Finding> findings = {failure("Tensor Mismatch", "train", 37)};
  EXPECT_FALSE(unconfirmed_at_full_size(findings, events, kCode).has_value());
  EXPECT_TRUE(full_size_notes(findings, events, kCode).empty())
      << "the job's own batch ran: no made-up values";
}

TEST(PipelineBatchSampling, NotesSayWhatTheFullSizeChecksCouldNotDo) {
  auto events = sampled_run();
  events.full_size[0].made_up.push_back({"a value read (bool)", user_frame(52)});
  events.full_size[0].made_up.push_back({"a value read (bool)", user_frame(52)});
  harness::FullSizeCheck slow = events.full_size[0];
  slow.reached = "timeout";
  slow.made_up.clear();
  events.full_size.push_back(slow);
  harness::FullSizeCheck old;
  old.reached = "unavailable";
  old.why = "PyTorch 1.13.1 has no shape-only tensors (FakeTensorMode, PyTorch 2.1+)";
  events.full_size.push_back(old);
  const auto notes = full_size_notes({}, events, kCode);
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_NE(notes[0].find("PyTorch 1.13.1"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("the first iteration of the loop at train.py:40"), std::string::npos) << notes[1];
  EXPECT_NE(notes[1].find("within 60 s"), std::string::npos) << notes[1];
  EXPECT_EQ(
      notes[2],
      "at the job's own batch size the shape-only tensors hold no values, so 0 (False) stood in for: a value "
      "read (bool) at train.py:52");
}

harness::HarnessEvents shape_only_run() {
  harness::HarnessEvents events;
  events.main_pid = 10;
  harness::ShapeOnlyModel model;
  model.limit = 768ull << 20;
  model.where = user_frame(141);
  model.made_up.push_back({"a value read (item)", user_frame(172)});
  model.pid = 10;
  events.shape_only.push_back(model);
  return events;
}

TEST(PipelineShapeOnly, TheNoteSaysFromWhereAndWhatWasMadeUp) {
  const auto notes = shape_only_notes(shape_only_run(), kCode);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("(768.0 MiB, PREFLIGHT_HOST_PARAMETERS) at train.py:141"), std::string::npos)
      << notes[0];
  EXPECT_NE(notes[0].find("made up: a value read (item) at train.py:172"), std::string::npos) << notes[0];
  EXPECT_TRUE(shape_only_notes(harness::HarnessEvents{}, kCode).empty());
}

TEST(PipelineShapeOnly, AnOperatorShapeOnlyTensorsCannotRunIsAWarningNotTheJobsFailure) {
  auto events = shape_only_run();
  auto limit = exception_at(60, "torch._subclasses.fake_tensor.DynamicOutputShapeException");
  limit.pid = 10;
  events.exceptions.push_back(limit);
  std::vector<model::Finding> findings = {failure("Unclassified", "evaluate", 60),
                                          failure("Path Not Found", "data", 20),
                                          failure("Output Lost", "", 0)};
  for (auto& finding : findings) {
    finding.severity = model::Severity::Error;
    finding.phase = model::Phase::Dryrun;
  }
  findings[2].severity = model::Severity::Warning;
  soften_shape_only_limits(findings, events, kCode);
  ASSERT_EQ(findings.size(), 2u) << "the outputs the stages not executed would write are not lost";
  EXPECT_EQ(findings[0].severity, model::Severity::Warning);
  EXPECT_NE(findings[0].message.find("the stages from evaluate on were not executed here"), std::string::npos)
      << findings[0].message;
  EXPECT_EQ(findings[1].severity, model::Severity::Error) << "another line's failure is the job's";

  // The same exception in a process whose model is real is the job's own.
  events.exceptions[0].pid = 11;
  findings[0].severity = model::Severity::Error;
  soften_shape_only_limits(findings, events, kCode);
  EXPECT_EQ(findings[0].severity, model::Severity::Error);
}

}  // namespace
}  // namespace preflight::pipeline
