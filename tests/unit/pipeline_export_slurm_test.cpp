// The files of `preflight export slurm`: the script against its golden file
// (tests/golden/preflight-array.sbatch), and hostile paths that bash, sbatch and jobs.txt must
// carry unchanged. The generated script is run by the real bash with a fake preflight that
// records what it was given.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "pipeline/export_slurm.hpp"
#include "test_support.hpp"
#include "util/text.hpp"

extern char** environ;

namespace preflight {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `argv` with only `env`; returns its exit status (-1 if it did not exit).
int run(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::vector<char*> args, envp;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  for (const auto& entry : env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0].c_str(), nullptr, nullptr, args.data(), envp.data()) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// The paths the golden script is written from: a hostile job, a '%' in the export folder.
pipeline::SlurmExport golden_export() {
  pipeline::SlurmExport batch;
  batch.jobs = {"/home/ana/jobs/mnist/job.yaml", "/home/ana/jobs/it's \"b\" $HOME `id`/job.yaml",
                "/home/ana/jobs/vae/train.yml"};
  batch.out = "/shared/export 50% \"x\" #1";
  batch.preflight = "/shared/preflight/bin/preflight";
  batch.data_dir = "/shared/preflight/share/preflight";
  batch.shared = "/shared";
  batch.platform = "slurm";
  batch.image = "oci:/shared/images/py's:3.11";
  batch.parallel = 8;
  return batch;
}

std::string file_named(const std::vector<pipeline::ExportedFile>& files, const std::string& name) {
  for (const auto& file : files)
    if (file.name == name) return file.text;
  return "missing " + name;
}

TEST(PipelineExportSlurm, TheScriptMatchesItsGoldenFile) {
  auto files = pipeline::export_slurm(golden_export());
  ASSERT_TRUE(files) << files.error().message;
  const std::string script = file_named(*files, "preflight-array.sbatch");
  const fs::path golden = testing::source_dir() / "tests" / "golden" / "preflight-array.sbatch";
  // PREFLIGHT_UPDATE_GOLDEN=1 rewrites the golden after a change meant to alter the script.
  if (const char* update = std::getenv("PREFLIGHT_UPDATE_GOLDEN"); update && std::string(update) == "1")
    std::ofstream(golden, std::ios::binary) << script;
  EXPECT_EQ(script, read(golden));
}

TEST(PipelineExportSlurm, JobsTxtHoldsOneJobPerLineInArrayOrder) {
  auto files = pipeline::export_slurm(golden_export());
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(file_named(*files, "jobs.txt"),
            "/home/ana/jobs/mnist/job.yaml\n/home/ana/jobs/it's \"b\" $HOME `id`/job.yaml\n"
            "/home/ana/jobs/vae/train.yml\n");
}

TEST(PipelineExportSlurm, TheArrayRunsAtMostParallelTasksAndNoMoreThanItHas) {
  pipeline::SlurmExport batch = golden_export();
  batch.parallel = pipeline::kDefaultSlurmParallel;
  batch.jobs.assign(10, "/jobs/a/job.yaml");
  auto ten = pipeline::export_slurm(batch);
  ASSERT_TRUE(ten);
  EXPECT_NE(file_named(*ten, "preflight-array.sbatch").find("\n#SBATCH --array=0-9%4\n"), std::string::npos);
  batch.jobs.resize(1);
  auto one = pipeline::export_slurm(batch);
  ASSERT_TRUE(one);
  EXPECT_NE(file_named(*one, "preflight-array.sbatch").find("\n#SBATCH --array=0-0%1\n"), std::string::npos);
}

TEST(PipelineExportSlurm, TheLogPatternKeepsSlurmsSymbolsAndEscapesTheFolders) {
  auto files = pipeline::export_slurm(golden_export());
  ASSERT_TRUE(files);
  EXPECT_NE(file_named(*files, "preflight-array.sbatch")
                .find("\n#SBATCH --output=\"/shared/export 50%% \\\"x\\\" #1/logs/%A_%a.out\"\n"),
            std::string::npos);
}

TEST(PipelineExportSlurm, WhatAFileCannotCarryIsBadInputNamingIt) {
  pipeline::SlurmExport batch = golden_export();
  batch.jobs.emplace_back("/home/ana/jobs/two\nlines/job.yaml");
  auto broken = pipeline::export_slurm(batch);
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().kind, ErrorKind::BadInput);
  EXPECT_NE(broken.error().message.find("'/home/ana/jobs/two\\nlines/job.yaml'"), std::string::npos);
  EXPECT_NE(broken.error().message.find("line break"), std::string::npos);
  for (const char* out : {"/shared/a\nb", "/shared/a\tb", "/shared/a\\b"}) {
    batch = golden_export();
    batch.out = out;
    auto refused = pipeline::export_slurm(batch);
    ASSERT_FALSE(refused) << out;
    EXPECT_EQ(refused.error().kind, ErrorKind::BadInput);
    EXPECT_NE(refused.error().message.find("--out"), std::string::npos) << refused.error().message;
  }
  batch = golden_export();
  batch.jobs.clear();
  EXPECT_FALSE(pipeline::export_slurm(batch));
}

TEST(PipelineExportSlurm, AQuotedWordIsWhatBashReadsBack) {
  testing::TempDir dir;
  const fs::path out = dir.path() / "out";
  for (const std::string text : {"plain", "a b", "it's", "''", "\"q\"", "$HOME ${x} $(id)", "`id`", "a\\b",
                                 "*?[a]", "!x", "#c", "%A_%a", "tab\there", "new\nline", "\xff\xfe", ""}) {
    const std::string command = "printf %s " + quote_shell_word(text) + " >\"$OUT\"";
    ASSERT_EQ(run({"/bin/bash", "-c", command}, {"OUT=" + out.string()}), 0) << command;
    EXPECT_EQ(read(out), text) << command;
  }
}

// A folder whose name holds what bash, sbatch and a list of lines each treat specially.
constexpr const char* kHostile = "it's \"x\" $HOME `id` %A #1 \\ *";

TEST(PipelineExportSlurm, EachTaskRunsPreflightOnItsLineWithHostilePathsIntact) {
  testing::TempDir dir;
  const fs::path place = dir.path() / kHostile;
  const fs::path fake =
      dir.write((fs::path(kHostile) / "bin" / "preflight").string(),
                "#!/bin/sh\n"
                "for arg in \"$@\" \"DATA=$PREFLIGHT_DATA_DIR\" \"CACHE=$PREFLIGHT_CACHE\"; do\n"
                "  printf '%s\\n' \"$arg\"\n"
                "done >\"$ARGS_FILE\"\n"
                "exit 3\n");
  fs::permissions(fake, fs::perms::owner_all);
  pipeline::SlurmExport batch;
  batch.jobs = {place / "jobs" / "a" / "job.yaml", place / "jobs" / "b $x 'y'" / "job.yaml"};
  batch.out = dir.path() / "export";  // sbatch's line refuses a backslash, so the folder has none
  batch.preflight = fake;
  batch.data_dir = place / "share";
  batch.shared = place;
  batch.platform = "it's.yaml";
  batch.image = "oci:" + (place / "image").string();
  // How the jobs are read (--as, --map), with a hostile local copy.
  batch.read_args = {"--as", "pytorchjob", "--map", "pvc://data=" + (place / "data $y").string()};
  batch.sandbox_args = {"--network", "--seccomp", "unconfined"};  // the user's lowering of the floor
  auto files = pipeline::export_slurm(batch);
  ASSERT_TRUE(files) << files.error().message;
  ASSERT_TRUE(pipeline::write_exported_files(batch.out, *files, pipeline::kSlurmExportFolders));
  EXPECT_TRUE(fs::is_directory(batch.out / "logs"));
  EXPECT_TRUE(fs::is_directory(batch.out / "reports"));
  const fs::path script = batch.out / "preflight-array.sbatch";
  EXPECT_NE(fs::status(script).permissions() & fs::perms::owner_exec, fs::perms::none);

  const fs::path args = dir.path() / "args";
  const std::vector<std::string> env = {"PATH=/usr/bin:/bin", "ARGS_FILE=" + args.string()};
  auto task = [&](const std::string& id) {
    auto with_id = env;
    with_id.push_back("SLURM_ARRAY_TASK_ID=" + id);
    return run({"/bin/bash", script.string()}, with_id);
  };
  EXPECT_EQ(task("1"), 3) << "the task's exit status is preflight's";
  EXPECT_EQ(read(args), "run\n" + batch.jobs[1].string() + "\n-q\n--json\n" +
                            (batch.out / "reports" / "1.json").string() +
                            "\n--platform\nit's.yaml\n--image\n" + batch.image +
                            "\n--as\npytorchjob\n--map\n" + batch.read_args[3] +
                            "\n--network\n--seccomp\nunconfined\nDATA=" + (place / "share").string() +
                            "\nCACHE=" + (place / "cache").string() + "\n");
  EXPECT_EQ(task("2"), 2) << "past the list's end";
  EXPECT_EQ(run({"/bin/bash", script.string()}, env), 2) << "outside an array";
}

}  // namespace
}  // namespace preflight
