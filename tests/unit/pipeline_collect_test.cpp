// The reports many runs wrote, read back for `preflight collect` and `preflight batch`, and
// merged: what a shared folder of a cluster's tasks can hold.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "pipeline/collect.hpp"
#include "report/batch_report.hpp"
#include "report_fixtures.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

json report_json(const std::string& name, const std::string& verdict, double seconds) {
  report::Report r = report::fixtures::sample_report();
  r.job_name = name;
  r.verdict = verdict;
  if (verdict != "fail") r.findings.clear();
  r.duration_s = seconds;
  return report::to_json(r);
}

TEST(PipelineCollect, ReadsEveryReportOfAFolderSortedAndLeavesOtherJsonOut) {
  testing::TempDir dir;
  write(dir.path() / "tasks" / "2" / "report.json", report_json("cifar", "pass", 3).dump());
  write(dir.path() / "tasks" / "1" / "report.json", report_json("mnist", "fail", 4.5).dump());
  write(dir.path() / "tasks" / "1" / "estimate.json", R"({"schema": "preflight.estimate/v1"})");
  write(dir.path() / "tasks" / "notes.txt", "not json");
  auto collected = pipeline::collect_reports({dir.path() / "tasks"}, testing::shipped_policies());
  ASSERT_TRUE(collected) << collected.error().message;
  ASSERT_EQ(collected->reports.size(), 2u);
  EXPECT_EQ(collected->reports[0].report.job_name, "mnist");
  EXPECT_EQ(collected->reports[1].report.job_name, "cifar");
  EXPECT_EQ(collected->skipped, 1u);
  // Described by this Preflight's rules, for SARIF's rules.
  ASSERT_FALSE(collected->reports[0].report.categories.empty());
  EXPECT_EQ(collected->reports[0].report.categories[0].name, "Permission Denied");
  // The run's own JSON, estimate included, is what the merged report keeps.
  EXPECT_EQ(collected->reports[0].json, report_json("mnist", "fail", 4.5));
}

TEST(PipelineCollect, ALinkIsNotFollowedAndABrokenFileIsBadInputNamingIt) {
  testing::TempDir dir;
  write(dir.path() / "elsewhere" / "report.json", report_json("secret", "pass", 1).dump());
  write(dir.path() / "tasks" / "1" / "report.json", report_json("mnist", "pass", 1).dump());
  fs::create_symlink(dir.path() / "elsewhere" / "report.json", dir.path() / "tasks" / "link.json");
  fs::create_directory_symlink(dir.path() / "elsewhere", dir.path() / "tasks" / "linked");
  auto collected = pipeline::collect_reports({dir.path() / "tasks"}, testing::shipped_policies());
  ASSERT_TRUE(collected) << collected.error().message;
  ASSERT_EQ(collected->reports.size(), 1u);
  EXPECT_EQ(collected->reports[0].report.job_name, "mnist");

  write(dir.path() / "tasks" / "3" / "report.json", R"({"schema": "preflight.rep)");
  auto broken = pipeline::collect_reports({dir.path() / "tasks"}, testing::shipped_policies());
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().kind, ErrorKind::BadInput);
  EXPECT_NE(broken.error().message.find("3/report.json is not JSON"), std::string::npos)
      << broken.error().message;
}

TEST(PipelineCollect, AFileGivenMustBeAReportAndNoReportAtAllIsBadInput) {
  testing::TempDir dir;
  write(dir.path() / "one.json", report_json("mnist", "pass", 1).dump());
  write(dir.path() / "other.json", R"({"schema": "something/v1"})");
  EXPECT_TRUE(pipeline::collect_reports({dir.path() / "one.json"}, testing::shipped_policies()));
  EXPECT_FALSE(pipeline::collect_reports({dir.path() / "other.json"}, testing::shipped_policies()));
  fs::create_directory(dir.path() / "empty");
  auto none = pipeline::collect_reports({dir.path() / "empty"}, testing::shipped_policies());
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no Preflight report"), std::string::npos);
  EXPECT_FALSE(pipeline::collect_reports({dir.path() / "missing"}, testing::shipped_policies()));
}

TEST(PipelineCollect, TheMergedVerdictHistogramAndJson) {
  testing::TempDir dir;
  write(dir.path() / "a.json", report_json("mnist", "fail", 4.5).dump());
  write(dir.path() / "b.json", report_json("cifar", "error", 2).dump());
  write(dir.path() / "c.json", report_json("vae", "pass", 3).dump());
  auto collected = pipeline::collect_reports({dir.path()}, testing::shipped_policies());
  ASSERT_TRUE(collected) << collected.error().message;
  const auto& reports = collected->reports;
  EXPECT_EQ(report::merged_verdict(reports), "fail");
  EXPECT_EQ(report::merged_verdict(std::span(reports).subspan(1)), "error");
  EXPECT_EQ(report::merged_verdict(std::span(reports).subspan(2)), "pass");
  const json merged = report::batch_json(reports);
  EXPECT_EQ(merged["schema"], "preflight.batch/v1");
  EXPECT_EQ(merged["counts"], json({{"pass", 1}, {"fail", 1}, {"error", 1}}));
  EXPECT_EQ(merged["categories"], json({{"Permission Denied", 1}}));
  EXPECT_EQ(merged["stages"], json({{"checkpoint", 1}}));
  EXPECT_DOUBLE_EQ(merged["duration_s"].get<double>(), 9.5);
  EXPECT_EQ(merged["reports"][1]["report"]["job"]["name"], "cifar");
  std::ostringstream out;
  report::print_batch_summary(reports, out, false);
  EXPECT_NE(out.str().find("fail: 3 jobs, 1 passed, 1 failed, 1 not run (error)"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("the slowest mnist (4.5 s)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("Permission Denied in stage checkpoint"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace preflight
