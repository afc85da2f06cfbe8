// The working folder each line of a setup or command text runs in, followed through cd.
#include <gtest/gtest.h>

#include "check/code_findings.hpp"
#include "check/working_folder.hpp"
#include "spec/job_spec.hpp"
#include "spec/platform_profile.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

struct PhillyJob {
  testing::TempDir dir;
  plan::RunPlan plan;
  PhillyJob() {
    dir.write("code/main.py", "");
    dir.write("code/src/train.py", "");
    auto job = *spec::load_job(dir.write("code/job.yaml", "command: python main.py\n"));
    auto profile = *spec::load_platform("philly", testing::source_dir() / "policies" / "platforms");
    plan = *plan::make_plan(job, profile, {},
                            {dir.path() / "run", "/src/emulator", "job-1", {}, {}, false, {}, {}, {}, {}});
  }
  // The folder each simple command starts in, as "path|why" (path "?" when unknown).
  std::vector<std::string> folders(const std::string& text) const {
    std::vector<std::string> out;
    check::ShellState state(plan);
    check::walk_shell(text, {"job.yaml", 3, 0}, state,
                      [&](const check::SimpleCommand&, const check::ShellState& now) {
                        out.push_back(now.folder().path.value_or("?") + "|" + now.folder().why);
                      });
    out.push_back(state.folder().path.value_or("?") + "|" + state.folder().why);
    return out;
  }
};

TEST(CheckWorkingFolder, FollowsCdWithTheJobsVariables) {
  PhillyJob job;
  EXPECT_EQ(job.folders("mkdir -p $HOME/work && cd $HOME/work && ln -s /hdfs/data/d data"),
            (std::vector<std::string>{"/philly/code|the folder philly starts the job in",
                                      "/philly/code|the folder philly starts the job in",
                                      "/home/job/work|after `cd $HOME/work` in job.yaml:3",
                                      "/home/job/work|after `cd $HOME/work` in job.yaml:3"}));
  EXPECT_EQ(job.folders("cd src\ncd ../runs; cd ${RUN_DIR:-/tmp/run}").back(),
            "/tmp/run|after `cd ${RUN_DIR:-/tmp/run}` in job.yaml:4");
  EXPECT_EQ(job.folders("OUT=~/out\ncd $OUT/x").back(), "/home/job/out/x|after `cd $OUT/x` in job.yaml:4");
  EXPECT_EQ(job.folders("pushd /tmp && popd").back(), "/philly/code|the folder philly starts the job in");
  EXPECT_EQ(job.folders("cd").back(), "/home/job|after `cd` in job.yaml:3");
}

TEST(CheckWorkingFolder, SaysWhyItCannotBeKnown) {
  PhillyJob job;
  EXPECT_EQ(
      job.folders("cd $DATA_ROOT && python main.py").back(),
      "?|`cd $DATA_ROOT` in job.yaml:3 names a folder that depends on what only the running shell knows");
  EXPECT_EQ(job.folders("cd $(dirname $0)").back().substr(0, 2), "?|");
  EXPECT_EQ(job.folders("cd /tmp; cd -").back(), "?|`cd -` in job.yaml:3 returns to the previous folder");
  EXPECT_EQ(job.folders("if [ -d /data ]; then cd /data; fi").back(),
            "?|`cd /data` in job.yaml:3 runs inside an if or a loop");
}

TEST(CheckWorkingFolder, WherePythonRunsAndItsEntryScript) {
  PhillyJob job;
  const std::string command = "CODE=$PWD && mkdir -p $HOME/w && cd $HOME/w && python $CODE/main.py --lr 0.1";
  auto folder = check::python_folder(command, {"job.yaml", 2, 0}, job.plan);
  EXPECT_EQ(folder.path, "/home/job/w");
  EXPECT_EQ(folder.why, "after `cd $HOME/w` in job.yaml:2");
  auto entry = check::entry_point(command, job.dir.path() / "code", job.plan, {"job.yaml", 2, 0});
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->script, "main.py");
  EXPECT_EQ(entry->args, (std::vector<std::string>{"--lr", "0.1"}));
  auto in_src = check::entry_point("cd src && python train.py", job.dir.path() / "code", job.plan, {});
  ASSERT_TRUE(in_src);
  EXPECT_EQ(in_src->script, "src/train.py");
  EXPECT_FALSE(check::python_folder("python main.py && cd src && python train.py", {}, job.plan).path)
      << "Python in two folders";
  EXPECT_EQ(check::python_folder("echo start", {}, job.plan).path, "/philly/code");
  job.dir.write("code/scripts/run.sh", "#!/bin/sh\nset -e\ncd ../src\npython train.py \"$@\"\n");
  auto scripted = check::python_folder("cd scripts && bash run.sh --fast", {"job.yaml", 2, 0}, job.plan);
  EXPECT_EQ(scripted.path, "/philly/code/src") << "a script the command runs, from where it runs it";
  EXPECT_EQ(scripted.why, "after `cd ../src` in scripts/run.sh:3");
}

}  // namespace
}  // namespace preflight
