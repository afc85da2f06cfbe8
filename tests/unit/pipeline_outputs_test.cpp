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
    plan.mounts.push_back({model::MountFact::Kind::Output, "model", "/philly/models/model",
                           dir.path() / "outputs" / "model", false, std::filesystem::path()});
  }
  std::filesystem::path upper() const { return dir.path() / "upper"; }
};

harness::HarnessEvents trained() {
  harness::HarnessEvents events;
  events.stages.push_back({"train", 1.0, 7, "loss.backward()", std::nullopt});
  return events;
}

TEST(PipelineOutputs, FilesOutsideTheOutputsAreAWarningNamingThem) {
  LeftBehind run;
  run.dir.write("upper/tmp/checkpoint.pt", std::string(2048, 'x'));
  run.dir.write("outputs/model/model.pt", "weights");
  auto findings = testing::completed(pipeline::output_findings(run.plan, run.upper(), trained()));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].category, "Output Lost");
  EXPECT_EQ(findings[0].severity, model::Severity::Warning);
  EXPECT_NE(findings[0].message.find("/tmp/checkpoint.pt (2.0 KiB)"), std::string::npos)
      << findings[0].message;
  EXPECT_NE(findings[0].hint.find("${{outputs.model}}"), std::string::npos);
}

TEST(PipelineOutputs, CachesUserInstallsBytecodeAndCompiledKernelsAreExpectedScratch) {
  LeftBehind run;
  run.dir.write("upper/home/job/.cache/pip/http/x", "c");
  run.dir.write("upper/home/job/.local/lib/python3.11/site-packages/m.py", "m");
  run.dir.write("upper/opt/preflight/run/events.jsonl", "{}");
  run.dir.write("upper/philly/code/__pycache__/main.cpython-311.pyc", "b");
  run.dir.write("upper/tmp/torchinductor_job/bx/cbx35c3cnntm.cpp", "k");
  run.dir.write("upper/home/job/.triton/cache/kernel.cubin", "k");
  run.dir.write("outputs/model/model.pt", "weights");
  EXPECT_TRUE(testing::completed(pipeline::output_findings(run.plan, run.upper(), trained())).empty());
}

TEST(PipelineOutputs, FilesWrittenIntoACopyOnWriteCodeFolderAreNamedAtTheirContainerPath) {
  LeftBehind run;
  run.plan.mounts.push_back({model::MountFact::Kind::Code, "", "/opt/ml/code", run.dir.path() / "src", false,
                             run.dir.path() / "code"});
  run.dir.write("code/upper/runs/last.pt", "weights");
  run.dir.write("code/upper/__pycache__/train.cpython-311.pyc", "b");
  run.dir.write("outputs/model/model.pt", "weights");
  auto findings = testing::completed(pipeline::output_findings(run.plan, run.upper(), trained()));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("1 file"), std::string::npos) << findings[0].message;
  EXPECT_NE(findings[0].message.find("/opt/ml/code/runs/last.pt"), std::string::npos) << findings[0].message;
}

TEST(PipelineOutputs, AnOutputLeftEmptyAfterTrainingIsAWarning) {
  LeftBehind run;
  std::filesystem::create_directories(run.upper());
  auto findings = testing::completed(pipeline::output_findings(run.plan, run.upper(), trained()));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule, "output-left-empty");
  EXPECT_NE(findings[0].message.find("\"model\" (/philly/models/model)"), std::string::npos);
  EXPECT_TRUE(testing::completed(pipeline::output_findings(run.plan, run.upper(), {})).empty())
      << "no training, no expectation";
}

TEST(PipelineOutputs, ACheckpointSavedWhereThePlatformDiscardsItPointsAtItsTorchSave) {
  LeftBehind run;
  run.plan.facts.code_container_dir = "/philly/code";
  run.dir.write("upper/home/job/runs/epoch0.pt", "weights");
  auto events = trained();
  events.saves.push_back(
      {"/home/job/runs/epoch0.pt", 7, harness::Frame{"/philly/code/train.py", 27, "main", true}});
  auto findings = testing::completed(pipeline::output_findings(run.plan, run.upper(), events));
  ASSERT_EQ(findings.size(), 2u) << "written outside, and the output left empty";
  for (const auto& finding : findings) {
    EXPECT_EQ(finding.location.file, "train.py") << finding.rule;
    EXPECT_EQ(finding.location.line, 27) << finding.rule;
    EXPECT_EQ(finding.stage, "checkpoint") << finding.rule;
  }
}

TEST(PipelineOutputs, FilesNotWrittenByTorchSaveHaveNoLocation) {
  LeftBehind run;
  run.dir.write("upper/tmp/log.txt", "loss 0.1");
  run.dir.write("outputs/model/model.pt", "weights");
  auto events = trained();
  events.saves.push_back(
      {"/philly/models/model/model.pt", 7, harness::Frame{"/philly/code/train.py", 30, "main", true}});
  auto findings = testing::completed(pipeline::output_findings(run.plan, run.upper(), events));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_TRUE(findings[0].location.file.empty());
  EXPECT_EQ(findings[0].stage, "checkpoint");  // where results are kept
}

TEST(PipelineOutputs, AFileAlsoCopiedIntoAnOutputIsNotLost) {
  // A working folder under the home, exported to the output at the end.
  LeftBehind run;
  run.dir.write("upper/home/job/work/checkpoints/best.pt", std::string(300, 'w'));
  run.dir.write("outputs/model/best.pt", std::string(300, 'w'));
  run.dir.write("upper/home/job/work/log.txt", "epoch 1");
  auto findings = testing::completed(pipeline::output_findings(run.plan, run.upper(), trained()));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("1 file"), std::string::npos) << findings[0].message;
  EXPECT_NE(findings[0].message.find("/home/job/work/log.txt"), std::string::npos) << findings[0].message;
}

TEST(PipelineOutputs, SymbolicLinksAndMountPointsAreNotWrittenFiles) {
  LeftBehind run;
  run.plan.mounts.push_back({model::MountFact::Kind::Input, "table", "/mnt/azureml/wd/INPUT_table",
                             run.dir.path() / "table.csv", true, std::filesystem::path()});
  run.dir.write("upper/mnt/azureml/wd/INPUT_table", "");
  run.dir.write("outputs/model/model.pt", "weights");
  std::filesystem::create_directories(run.upper() / "home/job/work");
  std::filesystem::create_symlink("/philly/data/x", run.upper() / "home/job/work/data");
  EXPECT_TRUE(testing::completed(pipeline::output_findings(run.plan, run.upper(), trained())).empty());
}

TEST(PipelineOutputs, TheScratchFolderHoldsIntermediatesButNotTheModel) {
  LeftBehind run;
  run.plan.facts.mounts.push_back({model::MountFact::Kind::Scratch, "", "/philly/job", "", false});
  run.dir.write("upper/philly/job/corpus/train.txt", std::string(4096, 't'));
  run.dir.write("outputs/model/log.txt", "done");
  EXPECT_TRUE(testing::completed(pipeline::output_findings(run.plan, run.upper(), trained())).empty());
  run.dir.write("upper/philly/job/model.pt", "weights");
  auto events = trained();
  events.saves.push_back(
      {"/philly/job/model.pt", 7, harness::Frame{"/philly/code/train.py", 40, "main", true}});
  auto findings = testing::completed(pipeline::output_findings(run.plan, run.upper(), events));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("1 file"), std::string::npos) << findings[0].message;
  EXPECT_NE(findings[0].message.find("/philly/job/model.pt"), std::string::npos) << findings[0].message;
}

}  // namespace
}  // namespace preflight
