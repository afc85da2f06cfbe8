// The plan is pure: job + profile + image facts → user, environment, mounts, launcher.
#include <gtest/gtest.h>

#include <algorithm>

#include "plan/run_plan.hpp"
#include "sandbox/oci_config.hpp"
#include "test_support.hpp"

namespace preflight {
namespace {

using testing::TempDir;

struct PlannedJob {
  TempDir dir;
  spec::JobSpec job;
  spec::PlatformProfile profile;
  Result<plan::RunPlan> plan{Error::runtime("not planned")};

  explicit PlannedJob(const std::string& job_yaml) {
    dir.write("code/main.py", "print('hi')\n");
    dir.write("code/data/a.csv", "1,2\n");
    auto job_file = dir.write("code/job.yaml", job_yaml);
    auto loaded = spec::load_job(job_file);
    if (!loaded) throw std::runtime_error(loaded.error().str());
    job = *loaded;
    auto philly = spec::load_platform("philly", testing::source_dir() / "policies" / "platforms");
    if (!philly) throw std::runtime_error(philly.error().str());
    profile = *philly;
    image::ImageConfig image;
    image.env = {"PATH=/image/bin", "IMAGE_ONLY=1", "LANG=image"};
    plan = plan::make_plan(job, profile, image, {dir.path() / "run", "/src/emulator", "job-1", {}, {}});
  }

  std::string env(const std::string& key) const {
    for (const auto& entry : plan->process.env)
      if (entry.rfind(key + "=", 0) == 0) return entry.substr(key.size() + 1);
    return "<unset>";
  }
  const plan::MountPlan* mount_at(const std::string& destination) const {
    for (const auto& m : plan->mounts)
      if (m.destination == destination) return &m;
    return nullptr;
  }
};

TEST(PlanPlanner, RunsAsThePlatformUserInTheReadOnlyCodeFolder) {
  PlannedJob p("command: python main.py\n");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  EXPECT_EQ(p.plan->process.uid, p.profile.user.uid);
  EXPECT_NE(p.plan->process.uid, 0u);
  const auto* code = p.mount_at(p.profile.mounts.code);
  ASSERT_NE(code, nullptr);
  EXPECT_TRUE(code->read_only);
  EXPECT_EQ(code->source, p.job.code_dir);
  EXPECT_EQ(p.plan->process.cwd, p.profile.mounts.code);
}

TEST(PlanPlanner, SubstitutesInputsAndOutputsWithTheirMountPaths) {
  PlannedJob p(
      "command: python main.py --data ${{inputs.digits}} --out ${{outputs.model}}\n"
      "inputs:\n  digits: {path: ./data}\noutputs:\n  model: {}\n");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  EXPECT_EQ(p.plan->command, "python main.py --data /hdfs/data/digits --out /philly/models/model");
  const auto* input = p.mount_at("/hdfs/data/digits");
  ASSERT_NE(input, nullptr);
  EXPECT_TRUE(input->read_only);
  const auto* output = p.mount_at("/philly/models/model");
  ASSERT_NE(output, nullptr);
  EXPECT_FALSE(output->read_only);
  // The output is a folder of the run, never the user's own: it is prepared for the job's user.
  EXPECT_EQ(output->source, p.dir.path() / "run" / "outputs" / "model");
  EXPECT_TRUE(std::any_of(p.plan->prepare.begin(), p.plan->prepare.end(), [&](const auto& d) {
    return d.path == output->source && d.uid == p.profile.user.uid;
  }));
  EXPECT_EQ(p.env("PHILLY_INPUT_DIGITS"), "/hdfs/data/digits");
  EXPECT_EQ(p.env("PHILLY_OUTPUT_MODEL"), "/philly/models/model");
  EXPECT_EQ(p.env("PREFLIGHT_INPUTS"), "/hdfs/data/digits") << "the harness's data stage watches the input mounts";
}

TEST(PlanPlanner, EnvironmentLayersImageThenPlatformThenJobAndNothingOfTheHost) {
  setenv("PREFLIGHT_TEST_HOST_ONLY", "leak", 1);
  PlannedJob p(
      "command: python main.py\nenvironment_variables: {OMP_NUM_THREADS: \"4\", LANG: job}\n"
      "resources: {gpus: 4}\n");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  EXPECT_EQ(p.env("IMAGE_ONLY"), "1");
  EXPECT_EQ(p.env("PATH"), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  EXPECT_EQ(p.env("LANG"), "job");
  EXPECT_EQ(p.env("OMP_NUM_THREADS"), "4");
  EXPECT_EQ(p.env("CUDA_VISIBLE_DEVICES"), "0,1,2,3");
  EXPECT_EQ(p.env("PHILLY_JOB_ID"), "job-1");
  EXPECT_EQ(p.env("HOME"), "/home/job");
  EXPECT_EQ(p.env("PREFLIGHT_TEST_HOST_ONLY"), "<unset>");
  EXPECT_EQ(p.env("PREFLIGHT_EVENTS"), plan::kEventsFile);
}

TEST(PlanPlanner, HarnessComesFirstOnTheJobsOwnPythonPath) {
  PlannedJob p("command: python main.py\nenvironment_variables: {PYTHONPATH: /philly/code/src}\n");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  EXPECT_EQ(p.env("PYTHONPATH"), std::string(plan::kEmulatorMount) + "/site:/philly/code/src");
}

TEST(PlanPlanner, GpusAndExplicitArgumentsReachTheHarness) {
  PlannedJob p("command: python main.py\nresources: {gpus: 2}\n"
               "dryrun:\n  args: {epochs: 3, lr: 0.5, resume: false, arch: resnet18}\n");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  EXPECT_EQ(p.env("PREFLIGHT_GPUS"), "2");
  EXPECT_EQ(p.env("PREFLIGHT_GPU_NAME"), p.profile.gpu.name);
  EXPECT_EQ(p.env("PREFLIGHT_GPU_MEMORY"), std::to_string(p.profile.gpu.memory_bytes));
  EXPECT_EQ(nlohmann::json::parse(p.env("PREFLIGHT_CLAMP_ARGS")),
            nlohmann::json::parse(R"({"epochs": 3, "lr": 0.5, "resume": false, "arch": "resnet18"})"));
}

TEST(PlanPlanner, NoGpusNoVirtualGpus) {
  PlannedJob p("command: python main.py\n");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  EXPECT_EQ(p.env("PREFLIGHT_GPUS"), "<unset>");
  EXPECT_EQ(p.env("PREFLIGHT_CLAMP_ARGS"), "<unset>");
  EXPECT_EQ(p.env("PREFLIGHT_INPUTS"), "<unset>");
}

TEST(PlanPlanner, LauncherRunsSetupThenCommandThroughThePlatformShell) {
  PlannedJob p("setup: pip install --user -r requirements.txt\ncommand: python main.py\n");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  std::vector<std::string> expected = {"/bin/sh", std::string(plan::kEmulatorMount) + "/launch.sh",
                                       "pip install --user -r requirements.txt", "python main.py"};
  expected.insert(expected.end(), p.profile.launcher.begin(), p.profile.launcher.end());
  EXPECT_EQ(p.plan->process.args, expected);
}

TEST(SandboxOciConfig, ConfigCarriesUserLimitsMountsAndNoCapabilities) {
  PlannedJob p("command: python main.py\ninputs:\n  digits: {path: ./data}\noutputs:\n  model: {}\n");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  auto config = sandbox::make_oci_config(*p.plan, "/run/rootfs", "/preflight/x");
  EXPECT_EQ(config["process"]["user"]["uid"], p.profile.user.uid);
  EXPECT_TRUE(config["process"]["noNewPrivileges"].get<bool>());
  EXPECT_TRUE(config["process"]["capabilities"]["effective"].empty());
  EXPECT_TRUE(config["process"]["capabilities"]["bounding"].empty());
  EXPECT_EQ(config["root"]["path"], "/run/rootfs");
  EXPECT_EQ(config["linux"]["resources"]["memory"]["limit"], p.profile.limits.memory_bytes);
  EXPECT_EQ(config["linux"]["resources"]["pids"]["limit"], p.profile.limits.pids);
  EXPECT_EQ(config["linux"]["cgroupsPath"], "/preflight/x");

  bool network_namespace = false;
  for (const auto& ns : config["linux"]["namespaces"]) network_namespace |= ns["type"] == "network";
  EXPECT_TRUE(network_namespace) << "a platform without network gets an empty network namespace";

  auto find_mount = [&](const std::string& destination) {
    for (const auto& m : config["mounts"])
      if (m["destination"] == destination) return m;
    return nlohmann::json();
  };
  auto options = [](const nlohmann::json& m) { return m["options"].get<std::vector<std::string>>(); };
  auto has = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  EXPECT_TRUE(has(options(find_mount("/hdfs/data/digits")), "ro"));
  EXPECT_TRUE(has(options(find_mount("/philly/models/model")), "rw"));
  EXPECT_TRUE(has(options(find_mount("/philly/code")), "ro"));
  EXPECT_TRUE(has(options(find_mount("/dev/shm")), "size=" + std::to_string(p.profile.limits.shm_bytes)));
}

TEST(SandboxOciConfig, NetworkedPlatformSharesNoEmptyNetworkNamespace) {
  PlannedJob p("command: python main.py\n");
  ASSERT_TRUE(p.plan.ok());
  p.plan->network = true;
  auto config = sandbox::make_oci_config(*p.plan, "/r", "/preflight/x");
  for (const auto& ns : config["linux"]["namespaces"]) EXPECT_NE(ns["type"], "network");
}

}  // namespace
}  // namespace preflight
