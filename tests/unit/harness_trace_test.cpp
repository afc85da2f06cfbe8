// The harness's trace files read back as untrusted input (docs/harness.md "Trace").
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "harness/trace.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

harness::HarnessTrace parsed(const std::string& text) {
  harness::HarnessTrace trace;
  harness::parse_trace(text, trace);
  return trace;
}

TEST(HarnessTrace, ReadsSpansCountersAndNames) {
  auto trace = parsed(
      R"({"ph":"X","name":"forward Net","cat":"forward","ts":1700000000000000,"dur":1500,"pid":12,"tid":12,"args":{"training":true}})"
      "\n"
      R"({"ph":"C","name":"memory","ts":1700000000001000,"pid":12,"tid":12,"args":{"rss":1048576}})"
      "\n"
      R"({"ph":"M","name":"process_name","pid":12,"tid":12,"args":{"name":"python main.py"}})"
      "\n");
  ASSERT_EQ(trace.records.size(), 3u);
  EXPECT_EQ(trace.records[0].phase, 'X');
  EXPECT_EQ(trace.records[0].category, "forward");
  EXPECT_EQ(trace.records[0].ts, 1700000000000000);
  EXPECT_EQ(trace.records[0].dur, 1500);
  EXPECT_EQ(trace.records[0].args["training"], true);
  EXPECT_EQ(trace.records[1].args["rss"], 1048576);
  EXPECT_EQ(trace.records[2].args["name"], "python main.py");
  EXPECT_EQ(trace.dropped, 0u);
}

TEST(HarnessTrace, SkipsWhatIsNotARecordOfTheHarness) {
  auto trace = parsed(
      "not json\n"
      R"({"ph":"B","name":"begin","ts":1,"pid":1,"tid":1})"
      "\n"
      R"({"ph":"X","name":"no duration","ts":1,"pid":1,"tid":1})"
      "\n"
      R"({"ph":"X","name":"negative","ts":1,"dur":-5,"pid":1,"tid":1})"
      "\n"
      R"({"ph":"X","name":"pid zero","ts":1,"dur":5,"pid":0,"tid":1})"
      "\n"
      R"({"ph":"X","name":"huge pid","ts":1,"dur":5,"pid":99999999,"tid":1})"
      "\n"
      R"({"ph":"X","name":"nan","ts":"1","dur":5,"pid":1,"tid":1})"
      "\n"
      R"({"ph":"M","name":"process_labels","pid":1,"tid":1,"args":{}})"
      "\n"
      R"({"ph":"C","name":"not numeric","ts":1,"pid":1,"tid":1,"args":{"x":"y"}})"
      "\n"
      R"({"ph":"X","name":"cut short)");
  EXPECT_TRUE(trace.records.empty());
}

TEST(HarnessTrace, BoundsNamesArgsAndCountersSeries) {
  const std::string long_name(500, 'n');
  const std::string big_value(5000, 'v');
  auto trace = parsed(R"({"ph":"X","name":")" + long_name +
                      R"(","ts":1,"dur":1,"pid":1,"tid":1,"args":{"v":")" + big_value + R"("}})" + "\n" +
                      R"({"ph":"C","name":"memory","ts":1,"pid":1,"tid":1,"args":{"rss":5,"label":"x"}})");
  ASSERT_EQ(trace.records.size(), 2u);
  EXPECT_EQ(trace.records[0].name.size(), harness::kMaxTraceName);
  EXPECT_TRUE(trace.records[0].args.empty());  // over kMaxTraceArgsBytes: left out
  EXPECT_EQ(trace.records[1].args.size(), 1u);
  EXPECT_TRUE(trace.records[1].args.contains("rss"));
}

TEST(HarnessTrace, ANameIsCutAtACharacterBoundary) {
  std::string name(harness::kMaxTraceName - 1, 'a');
  name += "é";  // two bytes that straddle the bound
  auto trace = parsed(R"({"ph":"X","name":")" + name + R"(","ts":1,"dur":1,"pid":1,"tid":1})");
  ASSERT_EQ(trace.records.size(), 1u);
  EXPECT_EQ(trace.records[0].name, std::string(harness::kMaxTraceName - 1, 'a'));
}

TEST(HarnessTrace, DroppedCountsAreTheLargestOfEachProcess) {
  harness::HarnessTrace trace;
  harness::parse_trace(R"({"ph":"M","name":"preflight_dropped","pid":5,"tid":5,"args":{"dropped":10}})"
                       "\n"
                       R"({"ph":"M","name":"preflight_dropped","pid":5,"tid":5,"args":{"dropped":30}})",
                       trace);
  harness::parse_trace(R"({"ph":"M","name":"preflight_dropped","pid":6,"tid":6,"args":{"dropped":2}})",
                       trace);
  EXPECT_EQ(trace.dropped, 32u);
  EXPECT_TRUE(trace.records.empty());
}

TEST(HarnessTrace, ReadsEachProcessFileAndNothingTheJobPutInTheirPlace) {
  testing::TempDir dir;
  const std::string span = R"({"ph":"X","name":"s","ts":1,"dur":1,"pid":7,"tid":7})";
  dir.write("trace-7.jsonl", span + "\n");
  dir.write("trace-8.jsonl", span + "\n" + span + "\n");
  dir.write("notes.jsonl", span + "\n");
  dir.write("secret.txt", span + "\n");
  std::filesystem::create_symlink(dir.path() / "secret.txt", dir.path() / "trace-9.jsonl");
  ASSERT_EQ(::mkfifo((dir.path() / "trace-10.jsonl").c_str(), 0600), 0);
  auto trace = harness::read_trace(dir.path());
  EXPECT_EQ(trace.records.size(), 3u);
}

TEST(HarnessTrace, AMissingFolderIsAnEmptyTrace) {
  testing::TempDir dir;
  auto trace = harness::read_trace(dir.path() / "absent");
  EXPECT_TRUE(trace.records.empty());
  EXPECT_EQ(trace.dropped, 0u);
}

}  // namespace
}  // namespace preflight
