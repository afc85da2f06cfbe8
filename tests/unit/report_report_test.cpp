// report.json v1 and the terminal summary, against golden files (tests/golden/).
#include "report/report.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "report/clamps.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

report::Report sample_report() {
  report::Report r;
  r.verdict = "fail";
  r.job_name = "mnist";
  r.job_file = "job.yaml";
  r.platform = "philly";
  r.image_ref = "pytorch";
  r.image_digest = "sha256:0123456789abcdef";
  r.stages = {{"setup", "absent", 0},      {"init", "passed", 0.5},        {"data", "passed", 0.25},
              {"model", "passed", 0.125},  {"train", "passed", 1.5},       {"validate", "passed", 0.25},
              {"checkpoint", "failed", 0}, {"evaluate", "not_reached", 0}, {"predict", "not_reached", 0}};
  report::Finding f;
  f.rule = "torch-save-read-only";
  f.category = "Permission Denied";
  f.dimension = "Execution Environment";
  f.root_cause = "Environment Difference";
  f.stage = "checkpoint";
  f.message = "torch.save cannot write /philly/code/model.pt: the code folder is read-only on the platform";
  f.location = {"train.py", 18, 0};
  f.hint = "write checkpoints to ${{outputs.model}}";
  r.findings = {f};
  r.clamps = {{"argparse --epochs", 14, 2, {"train.py", 40, 0}, "epochs"},
              {"lightning Trainer limit_val_batches", nullptr, 2, {}, ""}};
  r.notes = {"input \"mnist\" (over 1.0 GiB) sampled: 32 files kept, 9968 left out"};
  report::Estimate e;
  e.step_seconds_here = 0.25;
  e.step_seconds = 0.002;
  e.step_basis = "1.5 GFLOP at 40% of the Tesla P100-PCIE-16GB's 9.3 TFLOPS, at least 10 us per operator";
  e.batch_size = 64;
  e.steps_per_epoch = 938;
  e.epochs = 14;
  e.total_steps = 13132;
  e.run_hours = 13132 * 0.002 / 3600;
  e.gpus = 4;
  e.gpu_name = "Tesla P100-PCIE-16GB";
  e.gpu_needed_bytes = 1288490189;
  e.gpu_available_bytes = 17179869184;
  e.failure_stage = "checkpoint";
  e.failure_after_steps = 938;
  e.failure_after_hours = 938 * 0.002 / 3600;
  e.gpu_hours_saved = *e.failure_after_hours * 4;
  r.estimate = e;
  r.duration_s = 4.5;
  return r;
}

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
  report::Finding warning;
  warning.severity = report::Severity::Warning;
  EXPECT_EQ(report::verdict_of({}), "pass");
  EXPECT_EQ(report::verdict_of({warning}), "pass");
  EXPECT_EQ(report::verdict_of(sample_report().findings), "fail");
  EXPECT_EQ(report::exit_status_of("pass"), 0);
  EXPECT_EQ(report::exit_status_of("fail"), 1);
  EXPECT_EQ(report::exit_status_of("error"), 3);
}

}  // namespace
}  // namespace preflight
