// report.json read back: what batch and collect merge comes from files other runs wrote.
#include <gtest/gtest.h>

#include "report/report_reader.hpp"
#include "report_fixtures.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

using nlohmann::json;
using report::fixtures::sample_report;

// report.json without what the reader leaves out (the estimate: merged reports keep it as JSON).
json without_estimate(json report) {
  report.erase("estimate");
  return report;
}

TEST(ReportReader, AReportReadBackWritesTheSameJson) {
  const json written = report::to_json(sample_report());
  auto read = report::report_from_json(written, "runs/a/report.json");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(report::to_json(*read), without_estimate(written));
  EXPECT_EQ(read->code_dir, "/home/ana/mnist");
  EXPECT_TRUE(read->dry_run);
}

TEST(ReportReader, AFileThatIsNotAV1ReportIsBadInputNamingIt) {
  json other = report::to_json(sample_report());
  other["schema"] = "preflight.report/v2";
  auto read = report::report_from_json(other, "runs/a/report.json");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().kind, ErrorKind::BadInput);
  EXPECT_NE(read.error().message.find("runs/a/report.json"), std::string::npos);
  EXPECT_FALSE(report::report_from_json(json::array(), "x"));
}

TEST(ReportReader, AVerdictOrSeverityTheContractDoesNotKnowIsRefused) {
  json report = report::to_json(sample_report());
  report["verdict"] = "maybe";
  EXPECT_FALSE(report::report_from_json(report, "x"));
  report = report::to_json(sample_report());
  report["findings"][0]["severity"] = "fatal";
  auto read = report::report_from_json(report, "x");
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("findings[0]"), std::string::npos) << read.error().message;
}

TEST(ReportReader, FieldsOfAnotherTypeReadAsEmpty) {
  json report = report::to_json(sample_report());
  report["job"] = 5;
  report["findings"][0]["message"] = 42;
  report["findings"][0]["location"] = "train.py";
  report["stages"] = "all";
  report["clamps"] = json::array({7, json::object()});
  auto read = report::report_from_json(report, "x");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->job_name, "");
  EXPECT_EQ(read->findings[0].message, "");
  EXPECT_FALSE(read->findings[0].location.known());
  EXPECT_TRUE(read->stages.empty());
  EXPECT_FALSE(read->dry_run);
  EXPECT_EQ(read->clamps.size(), 2u);
}

TEST(ReportReader, TextNestedDeeperThanTheBoundIsRefusedAtItsLine) {
  // 100,000 levels crashed nlohmann::json's parser (SIGSEGV in collect and show).
  const std::string deep = "{\"schema\": \"preflight.report/v1\",\n\"job\": " + std::string(100'000, '[') +
                           std::string(100'000, ']') + "}";
  auto parsed = report::parse_report_json(deep, "runs/a/report.json");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().kind, ErrorKind::BadInput);
  EXPECT_EQ(parsed.error().where.str(), "runs/a/report.json:2:71") << "the 64th [ is the 65th level";
  EXPECT_NE(parsed.error().message.find("nested more than 64 deep"), std::string::npos);

  auto cut = report::parse_report_json(R"({"schema": "preflight.rep)", "runs/b/report.json");
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("runs/b/report.json is not JSON"), std::string::npos);
  auto read = report::parse_report_json(report::to_json(sample_report()).dump(), "runs/c/report.json");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_TRUE(report::is_report(*read));
}

}  // namespace
}  // namespace preflight
