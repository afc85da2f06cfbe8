// The dry run's trace: the job's stages and failure beside the harness's records, nested per
// thread and bounded (docs/formats.md "trace.json.gz").
#include <gtest/gtest.h>

#include <map>

#include "pipeline/run_trace.hpp"
#include "util/gzip.hpp"

namespace preflight {
namespace {

using nlohmann::json;

constexpr double kStarted = 1700000000.0;  // the container's start, wall clock
constexpr int kPid = 40;

// A process that started 0.5 s after the container and went init → data → train.
harness::HarnessEvents training_events() {
  harness::HarnessEvents events;
  events.started = events.command_started = true;
  events.main_pid = kPid;
  events.processes.push_back({kPid, false, kStarted + 0.5, 3.0});
  events.stages.push_back({"data", 1.0, kPid, "", {}});
  events.stages.push_back({"train", 2.0, kPid, "", {}});
  return events;
}

harness::TraceRecord span(const char* name, const char* category, double at, double seconds,
                          std::int64_t tid = kPid) {
  harness::TraceRecord record;
  record.name = name;
  record.category = category;
  record.ts = static_cast<std::int64_t>((kStarted + at) * 1e6);
  record.dur = static_cast<std::int64_t>(seconds * 1e6);
  record.pid = kPid;
  record.tid = tid;
  return record;
}

report::Report passing_report() {
  report::Report report;
  report.verdict = "pass";
  report.job_name = "mnist";
  return report;
}

std::vector<json> of_category(const json& trace, const std::string& category) {
  std::vector<json> out;
  for (const auto& event : trace["traceEvents"])
    if (event.value("cat", "") == category) out.push_back(event);
  return out;
}

TEST(PipelineRunTrace, StagesAreSpansOfTheJobTrackFromTheContainersStart) {
  const auto events = training_events();
  pipeline::TraceSources sources;
  sources.events = &events;
  sources.started = kStarted;
  sources.had_setup = true;
  sources.setup_seconds = 0.4;
  sources.total_seconds = 4.0;
  auto trace = pipeline::make_trace(std::move(sources), passing_report());
  const auto stages = of_category(trace.json, "stage");
  ASSERT_EQ(stages.size(), 4u);
  EXPECT_EQ(stages[0]["name"], "setup");
  EXPECT_EQ(stages[0]["ts"], 0);
  EXPECT_EQ(stages[0]["dur"], 400000);
  EXPECT_EQ(stages[1]["name"], "init");
  EXPECT_EQ(stages[1]["ts"], 500000);
  EXPECT_EQ(stages[1]["dur"], 1000000);
  EXPECT_EQ(stages[2]["name"], "data");
  EXPECT_EQ(stages[3]["name"], "train");
  EXPECT_EQ(stages[3]["ts"], 2500000);
  EXPECT_EQ(stages[3]["dur"], 1500000);  // to the container's end
  for (const auto& stage : stages) EXPECT_EQ(stage["pid"], pipeline::kJobTrackPid);
  EXPECT_TRUE(of_category(trace.json, "failure").empty());
  EXPECT_EQ(trace.json["otherData"]["preflight"]["verdict"], "pass");
}

TEST(PipelineRunTrace, TheFailureIsASpanInsideTheStageItStruckIn) {
  auto events = training_events();
  harness::ExceptionEvent exception;
  exception.type = "FileNotFoundError";
  exception.t = 2.5;
  exception.pid = kPid;
  events.exceptions.push_back(exception);
  pipeline::TraceSources sources;
  sources.events = &events;
  sources.started = kStarted;
  sources.total_seconds = 3.5;
  auto report = passing_report();
  report.verdict = "fail";
  model::Finding finding;
  finding.category = "Path Not Found";
  finding.stage = "train";
  finding.message = "No such file or directory: '/data/x'";
  finding.location = {"main.py", 52, 0};
  report.findings.push_back(finding);
  auto trace = pipeline::make_trace(std::move(sources), report);
  const auto failures = of_category(trace.json, "failure");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0]["name"], "failure: Path Not Found");
  EXPECT_EQ(failures[0]["ts"], 3000000);  // 0.5 s + 2.5 s
  EXPECT_EQ(failures[0]["dur"], 500000);  // to the end of train
  EXPECT_EQ(failures[0]["args"]["location"], "main.py:52");
  const auto stages = of_category(trace.json, "stage");
  EXPECT_EQ(stages.back()["args"]["failed"], "Path Not Found");
}

TEST(PipelineRunTrace, HarnessRecordsAreRebasedAndEveryThreadNests) {
  const auto events = training_events();
  pipeline::TraceSources sources;
  sources.events = &events;
  sources.started = kStarted;
  sources.total_seconds = 4;
  sources.harness.records.push_back(span("step", "forward", 2.6, 0.2));
  sources.harness.records.push_back(span("layer", "layer", 2.7, 0.3));  // outlasts the forward
  sources.harness.records.push_back(span("other thread", "data", 2.7, 0.3, 41));
  auto trace = pipeline::make_trace(std::move(sources), passing_report());
  std::map<std::string, json> by_name;
  for (const auto& event : trace.json["traceEvents"])
    if (event["ph"] == "X") by_name[event["name"]] = event;
  EXPECT_EQ(by_name["step"]["ts"], 2600000);
  EXPECT_EQ(by_name["layer"]["ts"], 2700000);
  EXPECT_EQ(by_name["layer"]["dur"], 100000);  // cut at the end of the span it started in
  EXPECT_EQ(by_name["other thread"]["dur"], 300000);
  bool named = false;
  for (const auto& event : trace.json["traceEvents"])
    named |= event["ph"] == "M" && event["name"] == "process_name" && event["pid"] == kPid;
  EXPECT_TRUE(named);  // a process that did not name itself is named by its pid
}

TEST(PipelineRunTrace, StaysUnderItsBoundAndCountsWhatItLeftOut) {
  const auto events = training_events();
  pipeline::TraceSources sources;
  sources.events = &events;
  sources.started = kStarted;
  sources.total_seconds = 4;
  sources.harness.dropped = 7;
  for (int i = 0; i < 50000; ++i) {
    auto record = span("next batch", "data", 1.0 + i * 1e-5, 5e-6);
    record.args = {{"index", i}, {"loader", "SomeDataset" + std::to_string(i * 7919 % 100003)}};
    sources.harness.records.push_back(record);
  }
  sources.harness.records.push_back(span("torch.save", "checkpoint", 3.9, 0.01));
  sources.harness.records.push_back(span("measured step", "step", 3.8, 0.05));
  sources.harness.records.push_back(span("training step 99", "step", 3.7, 0.05));
  auto trace = pipeline::make_trace(std::move(sources), passing_report(), 100000);
  EXPECT_LE(trace.gzip.size(), 100000u);
  EXPECT_GT(trace.left_out, 7u);
  EXPECT_EQ(trace.json["otherData"]["preflight"]["left_out"], trace.left_out);
  EXPECT_EQ(of_category(trace.json, "checkpoint").size(), 1u);  // kept whatever the bound
  const auto steps = of_category(trace.json, "step");           // the measured one only
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0]["name"], "measured step");
  EXPECT_EQ(of_category(trace.json, "stage").size(), 3u);
  const auto kept = of_category(trace.json, "data");
  ASSERT_FALSE(kept.empty());
  EXPECT_EQ(kept.front()["args"]["index"], 0);  // the earliest are kept
  auto unpacked = gunzip(trace.gzip, 64 << 20);
  ASSERT_TRUE(unpacked);
  EXPECT_EQ(json::parse(*unpacked), trace.json);
}

TEST(PipelineRunTrace, ARunThatNeverStartedHasOnlyItsNames) {
  const harness::HarnessEvents none;
  pipeline::TraceSources sources;
  sources.events = &none;
  auto trace = pipeline::make_trace(std::move(sources), passing_report());
  for (const auto& event : trace.json["traceEvents"]) EXPECT_EQ(event["ph"], "M");
  EXPECT_EQ(trace.left_out, 0u);
}

}  // namespace
}  // namespace preflight
