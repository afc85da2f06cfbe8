// report.json v1 and the terminal summary, against golden files (tests/golden/).
#include "report/report.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "report/clamps.hpp"
#include "report_fixtures.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

using report::fixtures::sample_report;

std::string read(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ReportReport, JsonMatchesTheV1Golden) {
  auto golden = nlohmann::json::parse(read(testing::source_dir() / "tests" / "golden" / "report.json"));
  EXPECT_EQ(report::to_json(sample_report()), golden) << report::to_json(sample_report()).dump(2);
}

TEST(ReportReport, BytesOfAJobThatAreNotUtf8BecomeReplacementCharactersInTheJson) {
  testing::TempDir dir;
  report::Report report = sample_report();
  report.findings.front().message = "bad byte \xFF here";
  ASSERT_TRUE(report::write_json(report, dir.path() / "report.json"));
  const auto written = nlohmann::json::parse(read(dir.path() / "report.json"));
  EXPECT_EQ(written["findings"][0]["message"], "bad byte \xEF\xBF\xBD here");
}

TEST(ReportReport, TerminalSummaryMatchesTheGoldenWithoutColour) {
  std::ostringstream out;
  report::print_summary(sample_report(), out, false);
  EXPECT_EQ(out.str(), read(testing::source_dir() / "tests" / "golden" / "summary.txt"));
}

TEST(ReportReport, ClampsFromTheHarnessKeepTheirValuesAndAreLocatedInTheCode) {
  harness::ClampEvent epochs{"argparse --epochs", "14", "2",
                             harness::Frame{"/job/code/train.py", 40, "main", true}, "epochs"};
  harness::ClampEvent limit{"lightning Trainer limit_val_batches", std::nullopt, "2", std::nullopt, ""};
  harness::ClampEvent text{"argparse --optimizer", "\"adam\"", "\"sgd\"", std::nullopt, ""};
  auto clamps = report::clamps_of({epochs, limit, text}, "/job/code");
  ASSERT_EQ(clamps.size(), 3u);
  EXPECT_EQ(clamps[0].original, 14);
  EXPECT_EQ(clamps[0].value, 2);
  EXPECT_EQ(clamps[0].location.str(), "train.py:40");
  EXPECT_TRUE(clamps[1].original.is_null());
  EXPECT_FALSE(clamps[1].location.known());
  EXPECT_EQ(clamps[2].value, "sgd");
  report::Report r = sample_report();
  r.clamps = {clamps[0]};
  EXPECT_EQ(report::to_json(r)["clamps"][0]["location"]["line"], 40);
}

TEST(ReportReport, NoClampLineWithoutClamps) {
  report::Report r = sample_report();
  r.clamps.clear();
  std::ostringstream out;
  report::print_summary(r, out, false);
  EXPECT_EQ(out.str().find("clamped:"), std::string::npos);
  EXPECT_EQ(report::to_json(r)["clamps"], nlohmann::json::array());
}

TEST(ReportReport, VerdictAndExitStatusFollowTheContract) {
  model::Finding warning;
  warning.severity = model::Severity::Warning;
  EXPECT_EQ(report::verdict_of({}), "pass");
  EXPECT_EQ(report::verdict_of({warning}), "pass");
  EXPECT_EQ(report::verdict_of(sample_report().findings), "fail");
  EXPECT_EQ(report::exit_status_of("pass"), 0);
  EXPECT_EQ(report::exit_status_of("fail"), 1);
  EXPECT_EQ(report::exit_status_of("error"), 3);
}

}  // namespace
}  // namespace preflight
