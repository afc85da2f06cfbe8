// Files a job wrote outside its output folders, and outputs left empty, are reported.
#include <gtest/gtest.h>

#include "pipeline/outputs.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

using testing::TempDir;

struct LeftBehind {
  TempDir dir;
  plan::RunPlan plan;
  LeftBehind() {
    plan.facts.home = "/home/job";
    std::filesystem::create_directories(dir.path() / "outputs" / "model");
    plan.mounts.push_back({diagnosis::MountFact::Kind::Output, "model", "/philly/models/model",
                           dir.path() / "outputs" / "model", false});
  }
  std::filesystem::path upper() const { return dir.path() / "upper"; }
};

TEST(PipelineOutputs, FilesOutsideTheOutputsAreAWarningNamingThem) {
  LeftBehind run;
  run.dir.write("upper/tmp/checkpoint.pt", std::string(2048, 'x'));
  run.dir.write("outputs/model/model.pt", "weights");
  auto findings = pipeline::output_findings(run.plan, run.upper(), true);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].category, "Output Lost");
  EXPECT_EQ(findings[0].severity, report::Severity::Warning);
  EXPECT_NE(findings[0].message.find("/tmp/checkpoint.pt (2.0 KiB)"), std::string::npos) << findings[0].message;
  EXPECT_NE(findings[0].hint.find("${{outputs.model}}"), std::string::npos);
}

TEST(PipelineOutputs, CachesUserInstallsAndBytecodeAreExpectedScratch) {
  LeftBehind run;
  run.dir.write("upper/home/job/.cache/pip/http/x", "c");
  run.dir.write("upper/home/job/.local/lib/python3.11/site-packages/m.py", "m");
  run.dir.write("upper/opt/preflight/run/events.jsonl", "{}");
  run.dir.write("upper/philly/code/__pycache__/main.cpython-311.pyc", "b");
  run.dir.write("outputs/model/model.pt", "weights");
  EXPECT_TRUE(pipeline::output_findings(run.plan, run.upper(), true).empty());
}

TEST(PipelineOutputs, AnOutputLeftEmptyAfterTrainingIsAWarning) {
  LeftBehind run;
  std::filesystem::create_directories(run.upper());
  auto findings = pipeline::output_findings(run.plan, run.upper(), true);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule, "output-left-empty");
  EXPECT_NE(findings[0].message.find("\"model\" (/philly/models/model)"), std::string::npos);
  EXPECT_TRUE(pipeline::output_findings(run.plan, run.upper(), false).empty()) << "no training, no expectation";
}

}  // namespace
}  // namespace preflight
