// InPod with real processes and folders, no container: a plan's places are folders of the
// test's own, as a pod's emptyDirs would be.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "sandbox/in_pod.hpp"
#include "test_support.hpp"
#include "util/text.hpp"

namespace preflight::sandbox {
namespace {

namespace fs = std::filesystem;
using Kind = model::MountFact::Kind;

// A plan of this process's own user, run as /bin/sh -c SCRIPT in `dir`/work.
plan::RunPlan shell_plan(const fs::path& dir, const std::string& script) {
  plan::RunPlan plan;
  plan.job_name = plan.job_id = "in-pod-test";
  plan.platform = "test";
  plan.run_dir = dir / "run";
  plan.process.args = {"/bin/sh", "-c", script};
  plan.process.env = {"PATH=/usr/bin:/bin"};
  plan.process.cwd = dir.string();
  plan.process.uid = ::geteuid();
  plan.process.gid = ::getegid();
  plan.harness = false;
  plan.timeout = std::chrono::seconds(30);
  return plan;
}

std::vector<std::string> run_plan(const plan::RunPlan& plan, Result<ContainerExit>& exit) {
  std::vector<std::string> lines;
  InPod pod;
  exit =
      pod.run(plan, "/", [&](model::OutputLine::Stream, std::string_view line) { lines.emplace_back(line); });
  return lines;
}

// The code and an input, read-only, and an output; the pod's folder for each in pod/.
std::vector<plan::MountPlan> job_mounts(const fs::path& dir) {
  return {{Kind::Code, "", (dir / "pod/code").string(), dir / "code", true, {}},
          {Kind::Input, "train", (dir / "pod/data").string(), dir / "data", true, {}},
          {Kind::Output, "model", (dir / "pod/outputs").string(), dir / "run/outputs/model", false, {}}};
}

TEST(InPod, TheInitContainerFillsTheReadOnlyPlacesAlone) {
  testing::TempDir temp;
  temp.write("code/train.py", "print('hi')\n");
  temp.write("data/train.csv", "a,b\n");
  for (const char* dir : {"pod/code", "pod/data", "pod/outputs"}) fs::create_directories(temp.path() / dir);
  plan::RunPlan plan = shell_plan(temp.path(), "true");
  plan.mounts = job_mounts(temp.path());
  ASSERT_TRUE(InPod().stage(plan));
  EXPECT_EQ(read_file(temp.path() / "pod/code/train.py").value_or(""), "print('hi')\n");
  EXPECT_EQ(read_file(temp.path() / "pod/data/train.csv").value_or(""), "a,b\n");
  EXPECT_TRUE(fs::is_empty(temp.path() / "pod/outputs"));
}

TEST(InPod, RunsTheJobAndCopiesWhatItWroteBack) {
  testing::TempDir temp;
  fs::create_directories(temp.path() / "run/outputs/model");
  fs::create_directories(temp.path() / "pod/outputs");  // the pod's emptyDir
  plan::RunPlan plan = shell_plan(temp.path(), "echo wrote > pod/outputs/weights.txt; echo done");
  plan.mounts = {job_mounts(temp.path())[2]};
  Result<ContainerExit> exit = Error::runtime("not run");
  const auto lines = run_plan(plan, exit);
  ASSERT_TRUE(exit) << exit.error().message;
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_EQ(lines, std::vector<std::string>{"done"});
  EXPECT_EQ(read_file(temp.path() / "run/outputs/model/weights.txt").value_or(""), "wrote\n");
}

TEST(InPod, RefusesAReadOnlyPlaceTheJobCouldWrite) {
  // A folder the job owns would let it write what the platform mounts read-only: the pod must
  // mount it readOnly (tests/integration/k8s.sh runs such pods).
  testing::TempDir temp;
  temp.write("code/train.py", "print('hi')\n");
  temp.write("pod/code/train.py", "print('hi')\n");
  plan::RunPlan plan = shell_plan(temp.path(), "true");
  plan.mounts = {job_mounts(temp.path())[0]};
  Result<ContainerExit> exit = Error::runtime("not run");
  run_plan(plan, exit);
  ASSERT_FALSE(exit);
  EXPECT_NE(exit.error().message.find("mount it readOnly"), std::string::npos) << exit.error().message;
}

TEST(InPod, ReportsTheJobsExitAndItsStoppedProcesses) {
  testing::TempDir temp;
  plan::RunPlan plan = shell_plan(temp.path(), "echo out; echo err >&2; exit 7");
  Result<ContainerExit> exit = Error::runtime("not run");
  const auto lines = run_plan(plan, exit);
  ASSERT_TRUE(exit) << exit.error().message;
  EXPECT_EQ(exit->exit_code, 7);
  EXPECT_EQ(lines.size(), 2u);

  plan = shell_plan(temp.path(), "sleep 30 & sleep 30");
  plan.timeout = std::chrono::milliseconds(300);
  run_plan(plan, exit);
  ASSERT_TRUE(exit) << exit.error().message;
  EXPECT_TRUE(exit->timed_out);
  EXPECT_EQ(exit->signal, SIGKILL);
}

TEST(InPod, RefusesAnotherUserAnotherRootAndAPlaceItCannotMake) {
  testing::TempDir temp;
  InPod pod;
  EXPECT_FALSE(pod.check_user(::geteuid() + 1, ::getegid()));
  EXPECT_TRUE(pod.check_user(::geteuid(), ::getegid()));
  plan::RunPlan plan = shell_plan(temp.path(), "true");
  plan.process.uid = ::geteuid() + 1;
  Result<ContainerExit> exit = Error::runtime("not run");
  run_plan(plan, exit);
  ASSERT_FALSE(exit);
  EXPECT_NE(exit.error().message.find("runAsUser"), std::string::npos) << exit.error().message;

  plan = shell_plan(temp.path(), "true");
  exit = pod.run(plan, temp.path(), [](auto, auto) {});
  ASSERT_FALSE(exit);
  EXPECT_NE(exit.error().message.find("rootfs:/"), std::string::npos) << exit.error().message;

  temp.write("blocker", "a file where the plan wants a folder");
  plan.mounts = {
      {Kind::Output, "out", (temp.path() / "blocker/out").string(), temp.path() / "run/out", false, {}}};
  run_plan(plan, exit);
  ASSERT_FALSE(exit);
  EXPECT_NE(exit.error().message.find("emptyDir"), std::string::npos) << exit.error().message;
}

TEST(InPod, TakesTheImagesEnvironmentFromThePodsLessKubernetesAndPreflight) {
  const auto config =
      pod_image_config({"PATH=/opt/conda/bin:/usr/bin", "KUBERNETES_SERVICE_HOST=10.0.0.1",
                        "KUBERNETES_PORT=tcp://10.0.0.1:443", "HOSTNAME=preflight-0-abc",
                        "JOB_COMPLETION_INDEX=3", "PREFLIGHT_CACHE=/cache", "NCCL_DEBUG=INFO"});
  EXPECT_EQ(config.env, (std::vector<std::string>{"PATH=/opt/conda/bin:/usr/bin", "NCCL_DEBUG=INFO"}));
}

TEST(InPod, IsRefusedOutsideAPod) {
  const char* saved = std::getenv("KUBERNETES_SERVICE_HOST");
  const std::string kept = saved ? saved : "";
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::setenv("PREFLIGHT_IN_POD", "0", 1);
  EXPECT_FALSE(check_in_pod());
  ::setenv("PREFLIGHT_IN_POD", "1", 1);
  EXPECT_TRUE(check_in_pod());
  ::unsetenv("PREFLIGHT_IN_POD");
  ::setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
  EXPECT_TRUE(check_in_pod());
  if (saved)
    ::setenv("KUBERNETES_SERVICE_HOST", kept.c_str(), 1);
  else
    ::unsetenv("KUBERNETES_SERVICE_HOST");
}

}  // namespace
}  // namespace preflight::sandbox
