// The reports many runs wrote, read back for `preflight collect` and `preflight batch`, and
// merged: what a shared folder of a cluster's tasks can hold.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "pipeline/batch.hpp"
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
  const report::Batch& batch = collected->batch;
  ASSERT_EQ(batch.reports.size(), 2u);
  EXPECT_EQ(batch.reports[0].job_name, "mnist");
  EXPECT_EQ(batch.reports[1].job_name, "cifar");
  EXPECT_EQ(batch.files[1], dir.path() / "tasks" / "2" / "report.json");
  EXPECT_EQ(collected->skipped, 1u);
  // Described by this Preflight's rules, for SARIF's rules.
  ASSERT_FALSE(batch.reports[0].categories.empty());
  EXPECT_EQ(batch.reports[0].categories[0].name, "Permission Denied");
  // The run's own JSON, estimate included, is what the merged report keeps.
  EXPECT_EQ(batch.json[0], report_json("mnist", "fail", 4.5));
}

TEST(PipelineCollect, ALinkIsNotFollowedAndABrokenFileIsBadInputNamingIt) {
  testing::TempDir dir;
  write(dir.path() / "elsewhere" / "report.json", report_json("secret", "pass", 1).dump());
  write(dir.path() / "tasks" / "1" / "report.json", report_json("mnist", "pass", 1).dump());
  fs::create_symlink(dir.path() / "elsewhere" / "report.json", dir.path() / "tasks" / "link.json");
  fs::create_directory_symlink(dir.path() / "elsewhere", dir.path() / "tasks" / "linked");
  auto collected = pipeline::collect_reports({dir.path() / "tasks"}, testing::shipped_policies());
  ASSERT_TRUE(collected) << collected.error().message;
  ASSERT_EQ(collected->batch.reports.size(), 1u);
  EXPECT_EQ(collected->batch.reports[0].job_name, "mnist");

  write(dir.path() / "tasks" / "3" / "report.json", R"({"schema": "preflight.rep)");
  auto broken = pipeline::collect_reports({dir.path() / "tasks"}, testing::shipped_policies());
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().kind, ErrorKind::BadInput);
  EXPECT_NE(broken.error().message.find("3/report.json is not JSON"), std::string::npos)
      << broken.error().message;
}

TEST(PipelineCollect, AReportNestedFarTooDeepIsBadInputNamingItsLine) {
  // What another run (or a stranger's job) left in a shared folder: 100,000 levels crashed collect.
  testing::TempDir dir;
  write(dir.path() / "tasks" / "1" / "report.json", R"({"schema": "preflight.report/v1", "job": )" +
                                                        std::string(100'000, '[') +
                                                        std::string(100'000, ']') + "}");
  auto collected = pipeline::collect_reports({dir.path() / "tasks"}, testing::shipped_policies());
  ASSERT_FALSE(collected);
  EXPECT_EQ(collected.error().kind, ErrorKind::BadInput);
  EXPECT_EQ(collected.error().where.file, dir.path() / "tasks" / "1" / "report.json");
  EXPECT_EQ(collected.error().where.line, 1);
  EXPECT_NE(collected.error().message.find("nested more than 64 deep"), std::string::npos)
      << collected.error().message;
}

TEST(PipelineCollect, AFileGivenMustBeAReportAndNoReportAtAllIsBadInput) {
  testing::TempDir dir;
  write(dir.path() / "one.json", report_json("mnist", "pass", 1).dump());
  write(dir.path() / "other.json", R"({"schema": "something/v1"})");
  write(dir.path() / "newer.json", R"({"schema": "preflight.report/v2", "verdict": "pass"})");
  EXPECT_TRUE(pipeline::collect_reports({dir.path() / "one.json"}, testing::shipped_policies()));
  EXPECT_FALSE(pipeline::collect_reports({dir.path() / "other.json"}, testing::shipped_policies()));
  // A report of another version is a report: refused, naming its schema, rather than skipped.
  auto newer = pipeline::collect_reports({dir.path()}, testing::shipped_policies());
  ASSERT_FALSE(newer);
  EXPECT_NE(newer.error().message.find("newer.json is a report of schema \"preflight.report/v2\""),
            std::string::npos)
      << newer.error().message;
  fs::create_directory(dir.path() / "empty");
  auto none = pipeline::collect_reports({dir.path() / "empty"}, testing::shipped_policies());
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no Preflight report"), std::string::npos);
  EXPECT_FALSE(pipeline::collect_reports({dir.path() / "missing"}, testing::shipped_policies()));
}

TEST(PipelineCollect, TheMergedVerdictHistogramAndJson) {
  testing::TempDir dir;
  write(dir.path() / "a.json", report_json("mnist", "fail", 4.5).dump());
  report::Report unreadable = report::error_report(
      "jobs/cifar/job.yaml", Error::bad_input("unknown key \"gpu\"", {"jobs/cifar/job.yaml", 3, 3}));
  write(dir.path() / "b.json", report::to_json(unreadable).dump());
  write(dir.path() / "c.json", report_json("vae", "pass", 3).dump());
  auto collected = pipeline::collect_reports({dir.path()}, testing::shipped_policies());
  ASSERT_TRUE(collected) << collected.error().message;
  const report::Batch& batch = collected->batch;
  const std::span<const report::Report> reports = batch.reports;
  EXPECT_EQ(report::merged_verdict(reports), "fail");
  EXPECT_EQ(report::merged_verdict(reports.subspan(1)), "error");
  EXPECT_EQ(report::merged_verdict(reports.subspan(2)), "pass");
  // A predicted failure outranks a job that could not be read, which outranks one that could not run.
  EXPECT_EQ(report::merged_exit_status(reports), 1);
  EXPECT_EQ(report::merged_exit_status(reports.subspan(1)), 2);
  EXPECT_EQ(report::merged_exit_status(reports.subspan(2)), 0);
  ASSERT_TRUE(reports[1].error);
  EXPECT_EQ(reports[1].error->message, "jobs/cifar/job.yaml:3:3: unknown key \"gpu\"");
  const json merged = report::batch_json(batch);
  EXPECT_EQ(merged["schema"], "preflight.batch/v1");
  EXPECT_EQ(merged["counts"], json({{"pass", 1}, {"fail", 1}, {"error", 1}}));
  EXPECT_EQ(merged["categories"], json({{"Permission Denied", 1}}));
  EXPECT_EQ(merged["stages"], json({{"checkpoint", 1}}));
  EXPECT_DOUBLE_EQ(merged["duration_s"].get<double>(), 7.5);
  EXPECT_EQ(merged["reports"][1]["report"]["error"]["exit"], 2);
  EXPECT_EQ(merged["reports"][2]["file"], (dir.path() / "c.json").string());
  std::ostringstream out;
  report::print_batch_summary(batch, out, false);
  EXPECT_NE(out.str().find("fail: 3 jobs, 1 passed, 1 failed, 1 not run (error)"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("the slowest mnist@philly (4.5 s)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("Permission Denied in stage checkpoint"), std::string::npos) << out.str();
  // A job that could not be read: its file stands for its name, and the error says why.
  EXPECT_NE(out.str().find("error  jobs/cifar/job.yaml"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("jobs/cifar/job.yaml:3:3: unknown key"), std::string::npos) << out.str();
}

TEST(PipelineBatch, ARunThatLeftNoReportHasOneSayingHowItEnded) {
  testing::TempDir dir;
  const auto run = [&](const std::string& name, int exit_status) {
    pipeline::JobRun r;
    r.job = "jobs/" + name + "/job.yaml";
    r.report = dir.path() / (name + ".json");
    r.log = dir.path() / (name + ".log");
    r.state = pipeline::RunState::Done;
    r.exit_status = exit_status;
    r.seconds = 2.5;
    return r;
  };
  write(dir.path() / "mnist.json", report_json("mnist", "pass", 1).dump());
  write(dir.path() / "cut.json", report_json("cut", "fail", 1).dump().substr(0, 40));
  std::vector<pipeline::JobRun> runs = {run("mnist", 0), run("cut", 128 + 9), run("none", 128 + 9)};
  runs.push_back(run("waiting", -1));
  runs.back().state = pipeline::RunState::Waiting;
  const report::Batch batch = pipeline::read_batch(runs, testing::shipped_policies());
  ASSERT_EQ(batch.reports.size(), 3u);  // the run never started has none
  EXPECT_EQ(batch.reports[0].verdict, "pass");
  for (std::size_t i : {1u, 2u}) {
    const report::Report& failed = batch.reports[i];
    EXPECT_EQ(failed.verdict, "error");
    EXPECT_EQ(failed.job_file, runs[i].job.string());
    EXPECT_DOUBLE_EQ(failed.duration_s, 2.5);
    ASSERT_TRUE(failed.error);
    EXPECT_EQ(failed.error->exit_status, 3);
    EXPECT_NE(failed.error->message.find("was ended by Killed without a report"), std::string::npos)
        << failed.error->message;
    EXPECT_NE(failed.error->message.find(runs[i].log.string()), std::string::npos) << failed.error->message;
  }
  // Written in the report's place: a later collect of the folder finds the same.
  auto collected = pipeline::collect_reports({dir.path()}, testing::shipped_policies());
  ASSERT_TRUE(collected) << collected.error().message;
  EXPECT_EQ(report::merged_exit_status(collected->batch.reports), 3);
  EXPECT_EQ(collected->batch.reports.size(), 3u);
}

}  // namespace
}  // namespace preflight
