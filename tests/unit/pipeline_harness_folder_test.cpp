// The harness folder a run mounts (pipeline/harness_folder.hpp): emulator/ with the bytecode of
// the image's interpreter beside its modules, made once per image and harness, then taken as
// kept. The image's interpreter here is this machine's python3 running the real compile.py.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "image/image_store.hpp"
#include "image/rootfs_cache.hpp"
#include "pipeline/harness_folder.hpp"
#include "sandbox/runtime.hpp"
#include "test_support.hpp"
#include "util/text.hpp"

namespace preflight::pipeline {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs the container's command (`python -I -B -S -c PROGRAM`) with this machine's python3 and
// the plan's stdin file; `rewrite`, when set, changes what it printed (a hostile image).
class HostPython final : public sandbox::ContainerRuntime {
 public:
  int runs = 0;
  std::function<std::string(std::string)> rewrite;
  fs::path scratch;

  Result<sandbox::ContainerExit> run(const plan::RunPlan& plan, const fs::path&,
                                     const sandbox::LineSink& on_line, std::size_t) override {
    ++runs;
    const auto& args = plan.process.args;
    EXPECT_EQ(args.at(args.size() - 2), "-c");
    const fs::path input = scratch / "input";
    const fs::path program = scratch / "program.py";
    const fs::path output = scratch / "output";
    std::ofstream(input) << plan.files.at(0).content;
    std::ofstream(program) << args.back();
    const std::string command = "python3 -I -B -S " + shell_quoted(program.string()) + " < " +
                                shell_quoted(input.string()) + " > " + shell_quoted(output.string());
    sandbox::ContainerExit exit;
    exit.exit_code = WEXITSTATUS(std::system(command.c_str()));
    std::string out = read_file(output).value_or("");
    if (rewrite) out = rewrite(out);
    on_line(model::OutputLine::Stream::Stdout, out.substr(0, out.find('\n')));
    return exit;
  }
};

class HarnessFolder : public ::testing::Test {
 protected:
  testing::TempDir dir;
  std::optional<testing::ScopedEnv> cache_env;
  std::optional<testing::ScopedEnv> data_env;
  HostPython python;
  image::UnpackedImage image;

  fs::path cache_dir() const { return dir.path() / "cache"; }
  fs::path emulator() const { return dir.path() / "data/emulator"; }

  void SetUp() override {
    if (std::system("python3 -c 'import sys; sys.exit(sys.version_info < (3, 7))' 2>/dev/null") != 0)
      GTEST_SKIP() << "no python3 of 3.7 or later";
    cache_env.emplace("PREFLIGHT_CACHE", cache_dir().c_str());
    data_env.emplace("PREFLIGHT_DATA_DIR", (dir.path() / "data").c_str());
    python.scratch = dir.path();
    image.ref = "pytorch";
    image.digest = "sha256:" + std::string(64, 'c');
    image.rootfs = image::RootfsCache(cache_dir()).entry_dir(image.digest) / image::cache_names::kRootfs;
    dir.write(fs::relative(image.rootfs / "usr/bin/python3", dir.path()).string(), "");
    const auto compile = read_file(testing::source_dir() / "emulator/check/compile.py");
    ASSERT_TRUE(compile);
    dir.write("data/emulator/check/compile.py", *compile);
    fs::create_directory_symlink(testing::source_dir() / "policies", dir.path() / "data/policies");
    dir.write("data/emulator/launch.sh", "#!/bin/sh\nexec \"$@\"\n");
    dir.write("data/emulator/site/sitecustomize.py", "import preflight_harness\n");
    dir.write("data/emulator/site/preflight_harness/__init__.py", "STATE = 'harness'\n");
    dir.write("data/emulator/site/preflight_harness/__pycache__/__init__.cpython-39.pyc", "stale");
  }

  fs::path folder() { return harness_folder(image, cache_dir(), python); }

  // The .pyc beside `module` (relative to the folder), as this python3 names it.
  static fs::path bytecode(const fs::path& folder, const std::string& module) {
    const fs::path source = folder / module;
    for (const auto& entry : fs::directory_iterator(source.parent_path() / "__pycache__"))
      if (entry.path().filename().string().starts_with(source.stem().string() + ".")) return entry.path();
    return {};
  }

  // Whether this python3 takes `pyc` as the bytecode of `source` (its hash of the source's bytes).
  static bool matches(const fs::path& source, const fs::path& pyc) {
    const std::string check =
        "import importlib.util, sys\n"
        "source, pyc = open(sys.argv[1], 'rb').read(), open(sys.argv[2], 'rb').read()\n"
        "sys.exit(pyc[:4] != importlib.util.MAGIC_NUMBER or pyc[4] != 3 or\n"
        "         pyc[8:16] != importlib.util.source_hash(source))\n";
    return std::system(("python3 -c " + shell_quoted(check) + " " + shell_quoted(source.string()) + " " +
                        shell_quoted(pyc.string()))
                           .c_str()) == 0;
  }
};

TEST_F(HarnessFolder, TheImagesInterpreterCompilesTheHarnessOnceAndTheFolderIsKept) {
  const fs::path made = folder();
  ASSERT_NE(made, emulator());
  EXPECT_EQ(made.parent_path(), cache_dir() / "harness");
  EXPECT_EQ(python.runs, 1);
  for (const std::string module : {"site/sitecustomize.py", "site/preflight_harness/__init__.py"}) {
    const fs::path pyc = bytecode(made, module);
    ASSERT_FALSE(pyc.empty()) << module;
    EXPECT_TRUE(matches(made / module, pyc)) << module;
    EXPECT_EQ(fs::status(pyc).permissions() & fs::perms::all, fs::perms(0644));
  }
  // The job's user reads it all; the host's stale bytecode is not copied.
  EXPECT_EQ(fs::status(made).permissions() & fs::perms::all, fs::perms(0755));
  EXPECT_EQ(fs::status(made / "site/preflight_harness").permissions() & fs::perms::all, fs::perms(0755));
  EXPECT_EQ(read_file(made / "launch.sh"), read_file(emulator() / "launch.sh"));
  EXPECT_FALSE(fs::exists(made / "site/preflight_harness/__pycache__/__init__.cpython-39.pyc"));

  EXPECT_EQ(folder(), made);
  EXPECT_EQ(python.runs, 1);
}

TEST_F(HarnessFolder, AnEditedHarnessOrAnotherImageGetsAFolderOfItsOwn) {
  const fs::path first = folder();
  dir.write("data/emulator/site/preflight_harness/__init__.py", "STATE = 'edited'\n");
  const fs::path edited = folder();
  EXPECT_NE(edited, first);
  EXPECT_TRUE(matches(edited / "site/preflight_harness/__init__.py",
                      bytecode(edited, "site/preflight_harness/__init__.py")));
  image.digest = "sha256:" + std::string(64, 'd');
  image.rootfs = image::RootfsCache(cache_dir()).entry_dir(image.digest) / image::cache_names::kRootfs;
  dir.write(fs::relative(image.rootfs / "usr/bin/python3", dir.path()).string(), "");
  EXPECT_NE(folder(), edited);
  EXPECT_EQ(python.runs, 3);
}

TEST_F(HarnessFolder, AFolderSomeoneElseMayWriteIsNotUsed) {
  const fs::path made = folder();
  ASSERT_NE(made, emulator());
  fs::permissions(made, fs::perms::group_write, fs::perm_options::add);
  EXPECT_EQ(folder(), emulator());
}

TEST_F(HarnessFolder, AnImageNotKeptByDigestCompilesNothing) {
  image.rootfs = dir.path() / "rootfs";  // a rootfs: folder
  dir.write("rootfs/usr/bin/python3", "");
  EXPECT_EQ(folder(), emulator());
  EXPECT_EQ(python.runs, 0);
  EXPECT_FALSE(fs::exists(cache_dir() / "harness"));
}

TEST_F(HarnessFolder, BytecodeTheHarnessDidNotAskForIsRefusedWholeAndNotAskedForAgain) {
  int edits = 0;
  for (const auto& change :
       {std::pair<std::string, std::string>{"\"tag\": \"cpython-", "\"tag\": \"../cpython-"},
        {"site/sitecustomize.py", "site/../../evil.py"},
        {"\"tag\": \"cpython-", "\"tag\": null, \"was\": \""}}) {
    // Another harness each time, so that no answer kept from the last one is taken.
    dir.write("data/emulator/site/preflight_harness/__init__.py",
              "EDITS = " + std::to_string(++edits) + "\n");
    python.rewrite = [&](std::string out) {
      const auto at = out.find(change.first);
      EXPECT_NE(at, std::string::npos) << out;
      return at == std::string::npos ? out : out.replace(at, change.first.size(), change.second);
    };
    EXPECT_EQ(folder(), emulator()) << change.second;
    EXPECT_EQ(python.runs, edits);
    python.rewrite = nullptr;
    EXPECT_EQ(folder(), emulator()) << change.second;  // the refusal is kept: no container
    EXPECT_EQ(python.runs, edits);
  }
  EXPECT_FALSE(fs::exists(dir.path() / "evil.py"));
  for (const auto& entry : fs::directory_iterator(cache_dir() / "harness"))
    EXPECT_EQ(entry.path().extension(), ".none") << entry.path();
}

}  // namespace
}  // namespace preflight::pipeline
