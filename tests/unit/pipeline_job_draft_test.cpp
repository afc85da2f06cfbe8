// `preflight init`'s draft: the entry script, its options turned into inputs and outputs, the
// GPUs and the setup, written as a job.yaml that spec::load_job accepts.
#include <gtest/gtest.h>

#include "pipeline/job_draft.hpp"
#include "spec/job_spec.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

using testing::TempDir;

// A scan as scan.py prints it: `files` and `argparse` are JSON texts.
check::CodeScan scan_of(const std::string& files, const std::string& argparse = "null") {
  auto scan = check::parse_code_scan(R"({"python": "3.11.2", "files": )" + files + R"(, "argparse": )" +
                                     argparse + "}");
  EXPECT_TRUE(scan) << scan.error().str();
  return *scan;
}

std::string file(const std::string& path, bool main = false, bool parser = false, int cuda = 0) {
  return R"({"path": ")" + path + R"(", "main": )" + (main ? "true" : "false") + R"(, "parser": )" +
         (parser ? "true" : "false") + R"(, "cuda": )" + std::to_string(cuda) + "}";
}

std::string parser(const std::string& options, const std::string& positionals = "[]") {
  return R"({"file": "train.py", "options": )" + options + R"(, "positionals": )" + positionals + "}";
}

const pipeline::DraftChoices kPhilly{"philly", "pytorch", false};

// The draft for `dir`, written as job.yaml and loaded back as the pipeline would.
struct Drafted {
  pipeline::JobDraft draft;
  std::string yaml;
  spec::JobSpec job;
};

Drafted draft_and_load(const TempDir& dir, const check::CodeScan& scan,
                       const pipeline::DraftChoices& choices = kPhilly) {
  auto entry = pipeline::choose_entry(scan);
  EXPECT_TRUE(entry);
  Drafted result;
  result.draft = pipeline::draft_job(dir.path(), scan, *entry, choices);
  result.yaml = pipeline::job_yaml(result.draft);
  auto job = spec::load_job(dir.write("job.yaml", result.yaml));
  EXPECT_TRUE(job) << (job ? "" : job.error().str()) << "\n" << result.yaml;
  if (job) result.job = *job;
  return result;
}

TEST(PipelineJobDraft, TrainPyComesBeforeOtherScripts) {
  auto scan =
      scan_of("[" + file("a/cli.py", true, true) + "," + file("main.py") + "," + file("train.py") + "]");
  EXPECT_EQ(pipeline::choose_entry(scan)->file, "train.py");
}

TEST(PipelineJobDraft, ElseTheShallowestScriptWithAMainGuardAndAParser) {
  auto scan = scan_of("[" + file("lib.py", false, true) + "," + file("tools/deep/fit.py", true, true) + "," +
                      file("tools/fit.py", true, true) + "," + file("eval.py", true) + "]");
  EXPECT_EQ(pipeline::choose_entry(scan)->file, "tools/fit.py");
}

TEST(PipelineJobDraft, APackageMainRunsAsAModule) {
  TempDir dir;
  auto scan = scan_of("[" + file("helpers.py") + "," + file("trainer/__main__.py") + "]");
  auto entry = pipeline::choose_entry(scan);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->module, "trainer");
  EXPECT_EQ(pipeline::draft_job(dir.path(), scan, *entry, kPhilly).command, "python -m trainer");
}

TEST(PipelineJobDraft, NoEntryScriptInALibrary) {
  EXPECT_FALSE(pipeline::choose_entry(scan_of("[" + file("lib.py", false, true) + "]")));
}

TEST(PipelineJobDraft, AnOptionDefaultThatExistsBecomesAnInput) {
  TempDir dir;
  dir.write("corpus/train.txt", "words");
  auto scan =
      scan_of("[" + file("train.py", true, true) + "]",
              parser(R"([{"line": 7, "flags": ["--corpus"], "dest": "corpus", "default": "./corpus/"}])"));
  auto result = draft_and_load(dir, scan);
  EXPECT_EQ(result.draft.command, "python train.py --corpus ${{inputs.corpus}}");
  ASSERT_EQ(result.job.inputs.size(), 1u);
  EXPECT_EQ(result.job.inputs[0].path, dir.path() / "corpus");
  EXPECT_NE(result.yaml.find("corpus: {path: ./corpus}  # --corpus (train.py:7)"), std::string::npos)
      << result.yaml;
}

TEST(PipelineJobDraft, ADataOptionTakesTheDataFolder) {
  TempDir dir;
  dir.write("datasets/mnist/raw/train.gz", "digits");
  auto scan =
      scan_of("[" + file("main.py", true, true) + "]",
              parser(R"([{"line": 3, "flags": ["--data-dir"], "dest": "data_dir", "default": "/mnt/mnist"},
                                 {"line": 4, "flags": ["--dataset"], "dest": "dataset", "default": "mnist"}])"));
  auto result = draft_and_load(dir, scan);
  EXPECT_EQ(result.draft.command, "python main.py --data-dir ${{inputs.datasets}}");
  ASSERT_EQ(result.job.inputs.size(), 1u);
  EXPECT_EQ(result.job.inputs[0].path, dir.path() / "datasets");
}

TEST(PipelineJobDraft, AnUnusedDataFolderIsNamedInAComment) {
  TempDir dir;
  dir.write("data/x.csv", "1,2");
  auto result = draft_and_load(dir, scan_of("[" + file("run.py", true) + "]"));
  EXPECT_TRUE(result.job.inputs.empty());
  EXPECT_NE(result.yaml.find("# data/ is uploaded with the code"), std::string::npos) << result.yaml;
}

TEST(PipelineJobDraft, OutputOptionsBecomeOutputsKeepingAFileName) {
  TempDir dir;
  auto scan = scan_of("[" + file("train.py", true, true) + "]", parser(R"([
      {"line": 5, "flags": ["--save-dir"], "dest": "save_dir", "required": true},
      {"line": 6, "flags": ["--checkpoint-dir"], "dest": "checkpoint_dir", "type": "str", "default": "."},
      {"line": 7, "flags": ["--save"], "dest": "save", "default": "model.pt"},
      {"line": 8, "flags": ["--log-interval"], "dest": "log_interval", "type": "int"},
      {"line": 9, "flags": ["--save-model"], "dest": "save_model", "action": "store_true"}])"));
  auto result = draft_and_load(dir, scan);
  EXPECT_EQ(result.draft.command,
            "python train.py --save-dir ${{outputs.output}} --checkpoint-dir ${{outputs.checkpoint}} "
            "--save ${{outputs.output_2}}/model.pt");
  ASSERT_EQ(result.job.outputs.size(), 3u);
  EXPECT_EQ(result.job.outputs[1].name, "checkpoint");
}

TEST(PipelineJobDraft, ARequiredOptionGetsAChoiceOrAPlaceholderToReplace) {
  TempDir dir;
  auto scan =
      scan_of("[" + file("train.py", true, true) + "]", parser(R"([
      {"line": 20, "flags": ["--dataset"], "dest": "dataset", "required": true},
      {"line": 21, "flags": ["--arch"], "dest": "arch", "required": true, "choices": ["resnet", "vgg"]},
      {"line": 22, "flags": ["--lr"], "dest": "lr", "type": "float"}])",
                                                               R"([{"line": 23, "dest": "config"}])"));
  auto result = draft_and_load(dir, scan);
  EXPECT_EQ(result.draft.command, "python train.py CHANGE_ME --dataset CHANGE_ME --arch resnet");
  EXPECT_NE(result.yaml.find("# config is required (train.py:23): replace CHANGE_ME"), std::string::npos);
  EXPECT_NE(result.yaml.find("# --dataset is required (train.py:20): replace CHANGE_ME"), std::string::npos);
}

TEST(PipelineJobDraft, CudaInTheCodeAsksForAGpuAndTurnsOnACudaFlag) {
  TempDir dir;
  auto scan =
      scan_of("[" + file("model.py", false, false, 12) + "," + file("train.py", true, true) + "]",
              parser(R"([{"line": 4, "flags": ["--cuda"], "dest": "cuda", "action": "store_true"}])"));
  auto result = draft_and_load(dir, scan);
  EXPECT_EQ(result.job.gpus, 1);
  EXPECT_EQ(result.draft.command, "python train.py --cuda");
  EXPECT_NE(result.yaml.find("resources: {gpus: 1}  # the code uses CUDA (model.py:12)"), std::string::npos);
}

TEST(PipelineJobDraft, WithoutCudaNoGpuAndNoCudaFlag) {
  TempDir dir;
  auto scan =
      scan_of("[" + file("train.py", true, true) + "]",
              parser(R"([{"line": 4, "flags": ["--cuda"], "dest": "cuda", "action": "store_true"}])"));
  auto result = draft_and_load(dir, scan);
  EXPECT_EQ(result.job.gpus, 0);
  EXPECT_EQ(result.draft.command, "python train.py");
}

TEST(PipelineJobDraft, RequirementsAreInstalledAtSetupWithANoteWithoutNetwork) {
  TempDir dir;
  dir.write("requirements.txt", "numpy\n");
  auto offline = draft_and_load(dir, scan_of("[" + file("train.py") + "]"));
  EXPECT_EQ(offline.job.setup.value_or(""), "pip install --user -r requirements.txt");
  EXPECT_NE(offline.yaml.find("# philly has no network"), std::string::npos) << offline.yaml;
  auto online = draft_and_load(dir, scan_of("[" + file("train.py") + "]"), {"azureml", "pytorch", true});
  EXPECT_EQ(online.yaml.find("no network"), std::string::npos) << online.yaml;
}

TEST(PipelineJobDraft, NoRequirementsNoSetup) {
  TempDir dir;
  auto result = draft_and_load(dir, scan_of("[" + file("train.py") + "]"));
  EXPECT_FALSE(result.job.setup);
  EXPECT_EQ(result.job.platform, "philly");
  EXPECT_EQ(result.job.image, "pytorch");
  EXPECT_EQ(result.job.name, dir.path().filename().string());
}

TEST(PipelineJobDraft, AnOddWordIsQuotedForTheShellAndTheYaml) {
  TempDir dir;
  auto scan = scan_of("[" + file("my script.py", true, true) + "]");
  auto result = draft_and_load(dir, scan);
  EXPECT_EQ(result.job.command, "python 'my script.py'");
}

}  // namespace
}  // namespace preflight
