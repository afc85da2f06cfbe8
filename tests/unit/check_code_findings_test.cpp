// Static checks on a scanned job: the entry script of a command, paths resolved inside an
// image's root, and the findings made from a scan against the image's modules, the platform's
// environment and its file system.
#include <gtest/gtest.h>

#include "check/code_findings.hpp"
#include "check/module_index.hpp"
#include "check/stages.hpp"
#include "spec/job_spec.hpp"
#include "spec/platform_profile.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

TEST(CheckEntryPoint, FindsTheScriptAndItsArgumentsUpToAShellOperator) {
  TempDir dir;
  dir.write("src/train.py", "");
  dir.write("tools/__main__.py", "");
  auto entry = check::entry_point("cd /x && python -u src/train.py --epochs 3 'a b' > log.txt", dir.path());
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->script, "src/train.py");
  EXPECT_EQ(entry->args, (std::vector<std::string>{"--epochs", "3", "a b"}));
  auto launched = check::entry_point("torchrun --nproc_per_node 4 src/train.py --lr 0.1", dir.path());
  ASSERT_TRUE(launched);
  EXPECT_EQ(launched->script, "src/train.py");
  auto module = check::entry_point("python -m tools --fast", dir.path());
  ASSERT_TRUE(module);
  EXPECT_EQ(module->script, "tools/__main__.py");
  EXPECT_FALSE(check::entry_point("python missing.py", dir.path())) << "not a file of the code folder";
  EXPECT_FALSE(check::entry_point("bash run.sh", dir.path()));
}

TEST(CheckResolveInRoot, FollowsAbsoluteLinksInsideTheRoot) {
  TempDir dir;
  dir.write("root/usr/bin/python3.11", "elf");
  fs::create_directories(dir.path() / "root/bin");
  fs::create_symlink("/usr/bin/python3.11", dir.path() / "root/usr/bin/python3");
  fs::create_symlink("usr/bin", dir.path() / "root/sbin");
  auto found = check::resolve_in_root(dir.path() / "root", "/sbin/python3");
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, dir.path() / "root/usr/bin/python3.11");
  EXPECT_FALSE(check::resolve_in_root(dir.path() / "root", "/usr/bin/python2"));
  EXPECT_TRUE(check::resolve_in_root(dir.path() / "root", "/usr/../../usr/bin")) << ".. stops at the root";
}

TEST(CheckModuleIndex, ParsesIndexAndNormalizesDistributionNames) {
  auto index = check::parse_module_index(
      R"({"python": "3.11.2", "modules": ["numpy", "yaml"], "builtin": ["sys"], "stdlib": ["os"],
          "distributions": [{"name": "PyYAML", "version": "6.0", "requires": [], "top_level": ["yaml"]}],
          "broken": [{"name": "a", "version": "1", "requirement": "b>=2", "problem": "missing"}]})",
      "test");
  ASSERT_TRUE(index.ok()) << index.error().str();
  EXPECT_TRUE(index->importable("numpy"));
  EXPECT_TRUE(index->importable("sys"));
  EXPECT_FALSE(index->importable("torch"));
  ASSERT_NE(index->distribution("pyyaml"), nullptr);
  EXPECT_EQ(index->distribution("py_yaml"), nullptr);
  EXPECT_EQ(check::normalize_distribution_name("Foo__Bar.baz"), "foo-bar-baz");
  ASSERT_EQ(index->broken.size(), 1u);
  EXPECT_FALSE(check::parse_module_index("[]", "x").ok());
}

// A job on philly with an image root holding /etc/hosts and /usr/share/data.
struct StaticJob {
  TempDir dir;
  spec::JobSpec job;
  spec::PlatformProfile profile;
  plan::RunPlan plan;
  std::optional<check::ModuleIndex> index;
  std::optional<check::EntryPoint> entry;

  explicit StaticJob(const std::string& job_yaml) {
    dir.write("code/train.py", "");
    dir.write("code/models/__init__.py", "");
    dir.write("root/etc/hosts", "");
    dir.write("root/usr/share/data/x", "");
    job = *spec::load_job(dir.write("code/job.yaml", job_yaml));
    profile = *spec::load_platform("philly", testing::source_dir() / "policies" / "platforms");
    image::ImageConfig image;
    image.env = {"PATH=/usr/bin", "IMAGE_VAR=1"};
    plan = *plan::make_plan(job, profile, image,
                            {dir.path() / "run", "/src/emulator", "job-1", {}, {}, false, {}, {}, {}, {}});
    index =
        *check::parse_module_index(R"({"python": "3.11.2", "modules": ["torch", "numpy", "os"]})", "test");
    entry = check::entry_point(plan.command, job.code_dir);
  }

  std::vector<model::Finding> findings(const check::CodeScan& scan) const {
    fs::path root = dir.path() / "root";
    return testing::completed(
        check::code_findings(scan, {plan, root, index, entry, false, {}, {}, testing::shipped_policies()}));
  }
};

check::ScannedFile file(const std::string& path) {
  check::ScannedFile f;
  f.path = path;
  return f;
}

TEST(CheckStatic, ImportsTheImageLacksAreErrorsOnlyWhereTheyBreakTheStart) {
  StaticJob job("command: python train.py\n");
  check::CodeScan scan;
  scan.python_version = "3.11.2";
  auto train = file("train.py");
  train.imports = {{"torch.nn", 1, false, true},
                   {"models.resnet", 2, false, true},
                   {"tensorboardX", 3, false, true},
                   {"wandb", 4, true, true},
                   {"tqdm", 9, false, false}};
  auto tool = file("tools/export.py");
  tool.imports = {{"onnx", 1, false, true}};
  scan.files = {train, file("models/__init__.py"), tool};
  auto findings = job.findings(scan);
  ASSERT_EQ(findings.size(), 2u) << "tools/export.py is not imported by the entry script";
  EXPECT_EQ(findings[0].category, "Library Not Found");
  EXPECT_EQ(findings[0].severity, model::Severity::Error) << "module level of the entry script";
  EXPECT_EQ(findings[0].location.file, "train.py");
  EXPECT_EQ(findings[0].location.line, 3);
  EXPECT_NE(findings[0].message.find("\"tensorboardX\""), std::string::npos) << findings[0].message;
  EXPECT_EQ(findings[1].location.line, 9);
  EXPECT_EQ(findings[1].severity, model::Severity::Warning) << "inside a function";
  EXPECT_NE(findings[1].message.find("imported when train.py:9 runs"), std::string::npos)
      << findings[1].message;
}

TEST(CheckStatic, EnvironmentReadsTheProfileDoesNotSet) {
  StaticJob job("command: RUN_TAG=a python train.py\nenvironment_variables: {OWN: x}\n");
  check::CodeScan scan;
  auto train = file("train.py");
  train.env = {{"PHILLY_JOB_ID", 1, "subscript", false, false, true},
               {"OWN", 2, "subscript", false, false, true},
               {"IMAGE_VAR", 3, "subscript", false, false, true},
               {"RUN_TAG", 4, "subscript", false, false, true},
               {"PHILY_JOB_ID", 5, "subscript", false, false, true},
               {"WANDB_KEY", 6, "get", false, false, true},
               {"SEED", 7, "get", true, false, true},
               {"WORLD_SIZE", 8, "subscript", false, true, false}};
  scan.files = {train};
  auto findings = job.findings(scan);
  ASSERT_EQ(findings.size(), 2u) << "a read under `in os.environ` or except KeyError is no finding";
  EXPECT_EQ(findings[0].stage, "init");
  EXPECT_EQ(findings[0].rule, "env-not-set");
  EXPECT_EQ(findings[0].category, "Key Not Found");
  EXPECT_EQ(findings[0].location.line, 5);
  EXPECT_NE(findings[0].hint.find("Did you mean PHILLY_JOB_ID"), std::string::npos) << findings[0].hint;
  EXPECT_EQ(findings[1].rule, "env-maybe-unset");
  EXPECT_EQ(findings[1].severity, model::Severity::Warning);
}

TEST(CheckStatic, AnotherPlatformsVariableGetsThisPlatformsEquivalent) {
  StaticJob job("command: python train.py\n");
  check::CodeScan scan;
  auto train = file("train.py");
  train.env = {{"SLURM_JOB_ID", 3, "subscript", false, false, true}};
  scan.files = {train};
  auto findings = job.findings(scan);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].hint.rfind("On philly, PHILLY_JOB_ID holds the job's id: read that instead.", 0), 0u)
      << findings[0].hint;
}

TEST(CheckStatic, PathsThePlatformWillNotHave) {
  StaticJob job("command: python train.py --data ${{inputs.d}}\ninputs: {d: {path: ./}}\n");
  check::CodeScan scan;
  auto train = file("train.py");
  for (const char* path : {"/home/ana/data/mnist", "C:\\data\\x.csv", "~/datasets/cifar",
                           "../shared/labels.csv", "/etc/hosts", "/usr/share/data/x", "/hdfs/data/d/train",
                           "/tmp/cache", "/data/imagenet", "/dev/shm", "/home/job/.cache/x"})
    train.paths.push_back({path, static_cast<int>(train.paths.size()) + 1, "", ""});
  scan.files = {train};
  auto findings = job.findings(scan);
  std::vector<std::pair<int, model::Severity>> got;
  for (const auto& f : findings) {
    EXPECT_EQ(f.category, "Path Not Found");
    got.emplace_back(f.location.line, f.severity);
  }
  using S = model::Severity;
  EXPECT_EQ(got, (std::vector<std::pair<int, S>>{
                     {1, S::Error}, {2, S::Error}, {3, S::Warning}, {4, S::Error}, {9, S::Warning}}));
}

TEST(CheckStatic, RelativePathsFromTheFolderPythonRunsIn) {
  StaticJob job("command: python train.py\n");
  job.dir.write("code/data/labels.csv", "");
  check::CodeScan scan;
  auto train = file("train.py");
  train.paths = {{"../data/labels.csv", 1, "", "read"},  // from /philly/code/src: in the code
                 {"../labels.csv", 2, "", "read"},       // /philly/code/labels.csv: the code lacks it
                 {"../../shared/x.csv", 3, "", "read"},  // /philly/shared: nowhere
                 {"../data/*.csv", 4, "", "read"}};      // a glob: its folder is in the code
  scan.files = {train};
  fs::path root = job.dir.path() / "root";
  auto findings_in = [&](check::WorkingFolder folder) {
    check::StaticContext context{job.plan, root, job.index,         job.entry,
                                 false,    {},   std::move(folder), testing::shipped_policies()};
    return testing::completed(check::code_findings(scan, context));
  };
  auto in_src = findings_in({"/philly/code/src", "after `cd src` in job.yaml:2"});
  ASSERT_EQ(in_src.size(), 2u);
  EXPECT_EQ(in_src[0].location.line, 2);
  EXPECT_EQ(in_src[0].severity, model::Severity::Error);
  EXPECT_EQ(in_src[0].stage, "data");
  EXPECT_EQ(
      in_src[0].message,
      "the path \"../labels.csv\" resolves, from the working folder /philly/code/src (after `cd src` in "
      "job.yaml:2), to /philly/code/labels.csv, which is in the read-only code folder, and the uploaded "
      "code has no such file");
  EXPECT_NE(in_src[1].message.find("to /philly/shared/x.csv, which is neither in the image nor mounted"),
            std::string::npos)
      << in_src[1].message;
  EXPECT_TRUE(findings_in({"/home/job/work/run", "after `cd $HOME/work/run` in job.yaml:2"}).empty())
      << "the home is writable: the job may have put them there itself";
  EXPECT_TRUE(findings_in({std::nullopt, "`cd $DATA` in job.yaml:2 names a folder ..."}).empty())
      << "an unknown working folder: no relative path finding";
}

TEST(CheckStatic, APathsStageIsWhatTheCodeDoesWithIt) {
  EXPECT_EQ(check::path_stage("", "write", "/home/ana/runs"), "checkpoint");
  EXPECT_EQ(check::path_stage("--save-dir", "", "/home/ana/runs"), "checkpoint");
  EXPECT_EQ(check::path_stage("output_dir", "read", "/x/y"), "checkpoint");
  EXPECT_EQ(check::path_stage("", "model", "/home/ana/bert"), "model");
  EXPECT_EQ(check::path_stage("--resume", "", "/x/last"), "model");
  EXPECT_EQ(check::path_stage("", "read", "/home/ana/best.pth"), "model");
  EXPECT_EQ(check::path_stage("--data", "", "/home/ana/mnist"), "data");
  EXPECT_EQ(check::path_stage("", "", "/home/ana/anything"), "data");
}

TEST(CheckStatic, SyntaxTheImagesPythonCannotParse) {
  StaticJob job("command: python train.py\n");
  check::CodeScan scan;
  scan.python_version = "3.8.10";
  auto train = file("train.py");
  train.syntax_error = check::SyntaxProblem{12, 5, "invalid syntax"};
  scan.files = {train};
  auto findings = job.findings(scan);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].category, "Syntax Error");
  EXPECT_EQ(findings[0].location.str(), "train.py:12:5");
  EXPECT_NE(findings[0].message.find("Python 3.8.10"), std::string::npos);
}

TEST(CheckStatic, PerformancePatternsAreWarnings) {
  StaticJob job("command: python train.py\nresources: {gpus: 1}\n");
  check::CodeScan scan;
  auto train = file("train.py");
  train.perf = {{check::PerfPattern::TfMapBeforeBatch, 7, "map before batch"},
                {check::PerfPattern::TorchDataloaderNoWorkers, 9, "num_workers"}};
  scan.files = {train};
  auto findings = job.findings(scan);
  ASSERT_EQ(findings.size(), 2u);
  for (const auto& f : findings) {
    EXPECT_EQ(f.category, "Slow Input Pipeline");
    EXPECT_EQ(f.severity, model::Severity::Warning);
  }
  EXPECT_EQ(findings[1].location.line, 9);
  EXPECT_EQ(findings[1].stage, "data");
  StaticJob cpu_only("command: python train.py\n");
  EXPECT_EQ(cpu_only.findings(scan).size(), 1u) << "no GPU waits for a DataLoader without workers";
}

TEST(CheckStatic, OnlyFilesTheJobRunsHaveErrors) {
  StaticJob job("command: python train.py\n");
  check::CodeScan scan;
  auto train = file("train.py");
  train.imports = {{"models", 1, false, true}};
  auto model = file("models/__init__.py");
  model.paths = {{"/home/ana/weights.pt", 3, "", ""}};
  auto tool = file("tools/plot.py");
  tool.paths = {{"/home/ana/plots", 4, "", ""}};
  scan.files = {train, model, tool};
  auto findings = job.findings(scan);
  ASSERT_EQ(findings.size(), 1u) << "tools/plot.py is never imported: nothing is said of it";
  EXPECT_EQ(findings[0].severity, model::Severity::Error) << "imported by the entry script";
  EXPECT_EQ(findings[0].location.file, "models/__init__.py");
  // A module named at run time may be any file: the others are read again, as warnings.
  scan.files[0].dynamic = {{5, "", false, ""}};
  findings = job.findings(scan);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[1].location.file, "tools/plot.py");
  EXPECT_EQ(findings[1].severity, model::Severity::Warning);
}

TEST(CheckStatic, AConditionalImportIsImportedWhenItsLineRuns) {
  StaticJob job("command: python train.py\n");
  check::CodeScan scan;
  auto train = file("train.py");
  check::ImportUse tracker{"wandb", 12, false, true, /*conditional=*/true};
  train.imports = {tracker, {"tqdm", 3, false, true}};
  auto model = file("models/__init__.py");
  check::ImportUse demo{"matplotlib", 40, false, true};
  demo.under_main = true;  // runs only when models/__init__.py is the script
  model.imports = {demo};
  train.imports.push_back({"models", 1, false, true});
  scan.files = {train, model};
  auto findings = job.findings(scan);
  ASSERT_EQ(findings.size(), 2u) << "the main guard of an imported module does not run";
  EXPECT_EQ(findings[0].subject, "wandb");
  EXPECT_EQ(findings[0].severity, model::Severity::Warning) << "it may never run";
  EXPECT_EQ(findings[0].prediction, model::Prediction::Unverified) << "a prediction the dry run settles";
  EXPECT_NE(findings[0].message.find("imported when train.py:12 runs"), std::string::npos)
      << findings[0].message;
  EXPECT_EQ(findings[1].subject, "tqdm");
  EXPECT_EQ(findings[1].severity, model::Severity::Error);
  EXPECT_EQ(findings[1].prediction, model::Prediction::None)
      << "certain: the entry script imports it as it loads";
  EXPECT_NE(findings[1].message.find("imported when train.py loads"), std::string::npos);
}

TEST(CheckStatic, ShellVariablesThePlatformDoesNotSet) {
  StaticJob job("command: python train.py\n");
  const std::string script =
      "#!/bin/sh\n"
      "OUT=/tmp/out\n"
      "for f in a b; do echo $f; done\n"
      "python train.py --out $OUT --data $DATA_ROOT --job $PHILLY_JOB_ID\n"
      "echo ${SEED:-0} $1 $@ ${DATA_ROOT}\n";
  auto findings = check::shell_env_findings({script, {"run.sh", 1, 0}, "init"}, job.plan);
  ASSERT_EQ(findings.size(), 1u) << "reported once, defaults and positional parameters are fine";
  EXPECT_EQ(findings[0].rule, "shell-env-not-set");
  EXPECT_EQ(findings[0].severity, model::Severity::Warning);
  EXPECT_EQ(findings[0].location.str(), "run.sh:4");
  EXPECT_NE(findings[0].message.find("$DATA_ROOT"), std::string::npos) << findings[0].message;
}

TEST(CheckStatic, PathsInCommandLinesAndConfigurationFiles) {
  StaticJob job("command: python train.py\n");
  fs::path root = job.dir.path() / "root";
  const std::string text =
      "data_root: /Users/ana/data\n"
      "# cache: /home/ana/cache\n"
      "hosts: /etc/hosts, url: https://x.org/a/b\n"
      "labels: ../labels.csv\n"
      "out: --out=C:\\runs\\a\n";
  auto in_config = check::text_path_findings(text, {"conf.yaml", 1, 0}, "", job.plan, root, false);
  std::vector<int> lines;
  for (const auto& f : in_config) lines.push_back(f.location.line);
  EXPECT_EQ(lines, (std::vector<int>{1, 5}))
      << "comments, paths in the image, URLs and ../ in configs are fine";
  auto in_command = check::text_path_findings(text, {"job.yaml", 2, 0}, "init", job.plan, root, true);
  ASSERT_EQ(in_command.size(), 3u);
  EXPECT_EQ(in_command[1].location.line, 5) << "../labels.csv leaves the code folder";
  EXPECT_EQ(in_command[0].stage, "data") << "data_root: what the job reads";
  EXPECT_EQ(in_command[2].stage, "checkpoint") << "out: where the job writes";
  auto after_cd =
      check::text_path_findings("cd /tmp/x && cat ../labels.csv\npython train.py --save ../../home/ana/o",
                                {"job.yaml", 2, 0}, "init", job.plan, root, true);
  ASSERT_EQ(after_cd.size(), 1u) << "../labels.csv from /tmp/x is in /tmp, which the job can write";
  EXPECT_EQ(after_cd[0].location.line, 3);
  EXPECT_EQ(after_cd[0].stage, "checkpoint");
  EXPECT_NE(after_cd[0].message.find("after `cd /tmp/x` in job.yaml:2"), std::string::npos)
      << after_cd[0].message;
}

}  // namespace
}  // namespace preflight
