// Which files of the code folder a job runs: its scripts and the job's own modules they import,
// followed as Python finds them, and what makes the walk give up following.
#include <gtest/gtest.h>

#include "check/import_reach.hpp"

namespace preflight {
namespace {

check::ScannedFile file(const std::string& path, std::vector<check::ImportUse> imports = {}) {
  check::ScannedFile f;
  f.path = path;
  f.imports = std::move(imports);
  return f;
}

check::ImportUse from_import(const std::string& module, int level, std::vector<std::string> names) {
  check::ImportUse use{module, 1, false, true};
  use.level = level;
  use.names = std::move(names);
  return use;
}

// A GPT-style repository: train.py imports model.py; data/*/prepare.py and sample.py are
// separate steps the command never runs.
check::CodeScan gpt_repository() {
  check::CodeScan scan;
  scan.files = {
      file("train.py",
           {{"numpy", 1, false, true}, {"model", 2, false, true}, {"wandb", 9, false, true, true}}),
      file("model.py", {{"torch", 1, false, true}}),
      file("sample.py", {{"model", 1, false, true}, {"tiktoken", 2, false, true}}),
      file("data/openwebtext/prepare.py", {{"datasets", 1, false, true}, {"tiktoken", 2, false, true}}),
      file("config/train_small.py")};
  return scan;
}

TEST(CheckImportReach, TheCommandsScriptAndWhatItImportsNotTheRestOfTheRepository) {
  auto reach = check::code_reach(gpt_repository(), {"train.py"});
  EXPECT_TRUE(reach.complete()) << reach.open_why;
  EXPECT_EQ(reach.files, (std::set<std::string>{"train.py", "model.py"}));
  EXPECT_EQ(reach.scripts, (std::set<std::string>{"train.py"}));
  EXPECT_FALSE(reach.runs("data/openwebtext/prepare.py"));
  auto with_config = check::code_reach(gpt_repository(), {"train.py", "config/train_small.py"});
  EXPECT_TRUE(with_config.runs("config/train_small.py")) << "a configuration script the command names";
}

TEST(CheckImportReach, NoScriptFoundLeavesTheWalkOpen) {
  auto reach = check::code_reach(gpt_repository(), {"missing.py"});
  EXPECT_FALSE(reach.complete());
  EXPECT_TRUE(reach.files.empty());
  EXPECT_NE(reach.open_why.find("no Python script"), std::string::npos) << reach.open_why;
}

TEST(CheckImportReach, PackagesSubmodulesAndRelativeImports) {
  check::CodeScan scan;
  scan.files = {
      file("src/train.py", {{"nets.resnet", 1, false, true}, from_import("utils", 0, {"io", "seed"})}),
      file("src/nets/__init__.py"),
      file("src/nets/resnet.py", {from_import("layers", 1, {"conv"}), from_import("", 2, {"utils"})}),
      file("src/nets/layers/__init__.py"),
      file("src/nets/layers/conv.py"),
      file("src/nets/layers/attention.py"),
      file("src/utils/__init__.py"),
      file("src/utils/io.py"),
      file("src/utils/plot.py"),
  };
  auto reach = check::code_reach(scan, {"src/train.py"});
  EXPECT_EQ(reach.files, (std::set<std::string>{"src/train.py", "src/nets/__init__.py", "src/nets/resnet.py",
                                                "src/nets/layers/__init__.py", "src/nets/layers/conv.py",
                                                "src/utils/__init__.py", "src/utils/io.py"}))
      << "from the script's folder: `import nets.resnet`, `from utils import io` takes a module, `seed` is "
         "none; "
         "`from .layers import conv` and `from .. import utils` from the file's own package";
}

TEST(CheckImportReach, TheMainGuardOfAnImportedModuleDoesNotRun) {
  check::CodeScan scan;
  check::ImportUse demo{"plotting", 20, false, true};
  demo.under_main = true;
  scan.files = {file("train.py", {{"model", 1, false, true}}), file("model.py", {demo}), file("plotting.py")};
  auto reach = check::code_reach(scan, {"train.py"});
  EXPECT_EQ(reach.files, (std::set<std::string>{"train.py", "model.py"}));
  EXPECT_TRUE(check::code_reach(scan, {"model.py"}).runs("plotting.py")) << "model.py run as the script";
}

TEST(CheckImportReach, ModulesNamedAtRunTime) {
  check::CodeScan scan;
  scan.files = {file("train.py"),       file("models/__init__.py"), file("models/gpt.py"),
                file("models/bert.py"), file("configurator.py"),    file("tools/export.py")};
  scan.files[0].dynamic = {{3, "models.", false, ""}, {4, "", false, "configurator.py"}};
  auto reach = check::code_reach(scan, {"train.py"});
  EXPECT_TRUE(reach.complete()) << reach.open_why;
  EXPECT_EQ(reach.files, (std::set<std::string>{"train.py", "models/__init__.py", "models/gpt.py",
                                                "models/bert.py", "configurator.py"}))
      << "\"models.\" + name may be any module of the package; exec(open(\"configurator.py\").read()) runs "
         "it";
  scan.files[0].dynamic.push_back({7, "", false, ""});
  auto open = check::code_reach(scan, {"train.py"});
  EXPECT_FALSE(open.complete());
  EXPECT_EQ(open.open_why, "train.py:7 imports a module named at run time");
  EXPECT_FALSE(open.runs("tools/export.py")) << "still not followed: the checks read it only as a warning";
}

}  // namespace
}  // namespace preflight
