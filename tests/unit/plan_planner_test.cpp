// The plan is pure: job + profile + image facts → user, environment, mounts, launcher.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

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

  explicit PlannedJob(const std::string& job_yaml, const std::string& platform = "philly") {
    dir.write("code/main.py", "print('hi')\n");
    dir.write("code/data/a.csv", "1,2\n");
    auto job_file = dir.write("code/job.yaml", job_yaml);
    auto loaded = spec::load_job(job_file);
    if (!loaded) throw std::runtime_error(loaded.error().str());
    job = *loaded;
    auto loaded_profile = spec::load_platform(platform, testing::source_dir() / "policies" / "platforms");
    if (!loaded_profile) throw std::runtime_error(loaded_profile.error().str());
    profile = *loaded_profile;
    image::ImageConfig image;
    image.env = {"PATH=/image/bin", "IMAGE_ONLY=1", "LANG=image"};
    plan = plan::make_plan(job, profile, image,
                           {dir.path() / "run", "/src/emulator", "job-1", {}, {}, true, {}, {}, {}, {}});
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
  // The content of the file the platform writes at `destination`, parsed.
  nlohmann::json file_at(const std::string& destination) const {
    const auto* mount = mount_at(destination);
    if (!mount) return nullptr;
    for (const auto& file : plan->files)
      if (file.path == mount->source) return nlohmann::json::parse(file.content);
    return nullptr;
  }
};

const char* kSageMakerJob =
    "command: python main.py\n"
    "inputs: {train: ./data}\n"
    "hyperparameters: {epochs: 2, learning-rate: 0.01, optimizer: adam, tag: \"7\", use-cuda: true}\n";

TEST(PlanPlanner, SageMakerPassesHyperparametersAsItsToolkitDoes) {
  PlannedJob p(kSageMakerJob, "sagemaker");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  EXPECT_EQ(p.plan->command,
            "python main.py --epochs 2 --learning-rate 0.01 --optimizer adam --tag 7 --use-cuda True");
  EXPECT_EQ(p.env("SM_HP_LEARNING-RATE"), "0.01");
  EXPECT_EQ(p.env("SM_HP_USE-CUDA"), "true");
  EXPECT_EQ(p.env("SM_HP_OPTIMIZER"), "adam");
  EXPECT_EQ(nlohmann::json::parse(p.env("SM_HPS")),
            nlohmann::json::parse(R"({"epochs": 2, "learning-rate": 0.01, "optimizer": "adam", "tag": "7",
                                      "use-cuda": true})"));
  EXPECT_EQ(nlohmann::json::parse(p.env("SM_USER_ARGS"))[0], "--epochs");
  // Every value of hyperparameters.json is a string: the JSON of the value.
  EXPECT_EQ(p.file_at("/opt/ml/input/config/hyperparameters.json"),
            nlohmann::json::parse(R"({"epochs": "2", "learning-rate": "0.01", "optimizer": "\"adam\"",
                                      "tag": "\"7\"", "use-cuda": "true"})"));
  EXPECT_TRUE(p.plan->notes.empty());
}

TEST(PlanPlanner, SageMakerWritesItsConfigFilesReadOnlyAndRunsAsRoot) {
  PlannedJob p(kSageMakerJob, "sagemaker");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  EXPECT_EQ(p.plan->process.uid, 0u);
  EXPECT_EQ(p.plan->hostname, "algo-1");
  EXPECT_EQ(p.env("SM_CHANNEL_TRAIN"), "/opt/ml/input/data/train");
  EXPECT_EQ(p.env("SM_CHANNELS"), R"(["train"])");
  EXPECT_EQ(p.env("SM_HOSTS"), R"(["algo-1"])");
  const auto training_env = nlohmann::json::parse(p.env("SM_TRAINING_ENV"));
  EXPECT_EQ(training_env["channel_input_dirs"]["train"], "/opt/ml/input/data/train");
  EXPECT_EQ(training_env["num_cpus"], 4);
  EXPECT_EQ(p.file_at("/opt/ml/input/config/resourceconfig.json")["hosts"],
            nlohmann::json::parse(R"(["algo-1"])"));
  EXPECT_EQ(p.file_at("/opt/ml/input/config/inputdataconfig.json")["train"]["TrainingInputMode"], "File");
  const auto* config = p.mount_at("/opt/ml/input/config/hyperparameters.json");
  ASSERT_NE(config, nullptr);
  EXPECT_TRUE(config->read_only);
  EXPECT_EQ(config->source, p.dir.path() / "run" / "platform" / "opt/ml/input/config/hyperparameters.json");
  // The model folder is kept after the job: a writable output of the platform's own.
  const auto* model = p.mount_at("/opt/ml/model");
  ASSERT_NE(model, nullptr);
  EXPECT_FALSE(model->read_only);
  EXPECT_EQ(model->kind, model::MountFact::Kind::Output);
  EXPECT_TRUE(model->name.empty());
}

TEST(PlanPlanner, HyperparametersOnAPlatformWithoutThemLeaveANote) {
  PlannedJob p(kSageMakerJob);
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  EXPECT_EQ(p.plan->command, "python main.py");
  ASSERT_EQ(p.plan->notes.size(), 1u);
  EXPECT_NE(p.plan->notes[0].find("not passed to the job on philly"), std::string::npos);
}

TEST(PlanPlanner, OtherPlatformsExportTheirOwnVariables) {
  const char* job = "command: python main.py\ninputs: {training: ./data}\noutputs: {model: {}}\n";
  PlannedJob vertex(job, "vertex");
  ASSERT_TRUE(vertex.plan.ok()) << vertex.plan.error().str();
  EXPECT_EQ(vertex.env("AIP_MODEL_DIR"), "gs://staging/job-1/model/");
  EXPECT_EQ(vertex.env("AIP_TRAINING_DATA_URI"), "gs://training/");
  EXPECT_NE(vertex.mount_at("/gcs/training"), nullptr);
  EXPECT_EQ(nlohmann::json::parse(vertex.env("CLUSTER_SPEC"))["task"]["type"], "workerpool0");
  PlannedJob kubeflow(job, "kubeflow");
  ASSERT_TRUE(kubeflow.plan.ok()) << kubeflow.plan.error().str();
  EXPECT_EQ(kubeflow.env("MASTER_ADDR"), kubeflow.plan->hostname);
  EXPECT_EQ(kubeflow.env("WORLD_SIZE"), "1");
  EXPECT_EQ(kubeflow.env("PET_NODE_RANK"), "0");
  PlannedJob slurm(job, "slurm");
  ASSERT_TRUE(slurm.plan.ok()) << slurm.plan.error().str();
  EXPECT_EQ(slurm.env("SLURM_NTASKS"), "1");
  EXPECT_EQ(slurm.env("SLURM_NODELIST"), "gpu001");
  EXPECT_NE(slurm.plan->process.uid, 0u);
  // AzureML's data folders lie under the job's own runtime folder.
  PlannedJob azureml(job, "azureml");
  ASSERT_TRUE(azureml.plan.ok()) << azureml.plan.error().str();
  EXPECT_EQ(azureml.env("AZURE_ML_OUTPUT_model"), "/mnt/azureml/cr/j/job-1/cap/data-capability/wd/model");
  EXPECT_NE(azureml.mount_at("/mnt/azureml/cr/j/job-1/cap/data-capability/wd/INPUT_training"), nullptr);
}

TEST(PlanPlanner, ALongJobNameGivesAHostNameOfOneDnsLabel) {
  // 58 characters: "<name>-master-0" is 67, which sethostname refuses; Kubernetes cuts it to 63
  // ("...-mast") and the dry run does the same.
  const std::string name(53, 'a');
  PlannedJob kubeflow("name: " + name + "-bcde\ncommand: python main.py\n", "kubeflow");
  ASSERT_TRUE(kubeflow.plan.ok()) << kubeflow.plan.error().str();
  EXPECT_EQ(kubeflow.plan->hostname, name + "-bcde-mast");
  EXPECT_EQ(kubeflow.env("MASTER_ADDR"), kubeflow.plan->hostname);
  PlannedJob dash("name: " + std::string(62, 'b') + "-cd\ncommand: python main.py\n", "kubeflow");
  ASSERT_TRUE(dash.plan.ok()) << dash.plan.error().str();
  EXPECT_EQ(dash.plan->hostname, std::string(62, 'b')) << "no trailing '-' after the cut";
}

TEST(PlanPlanner, APlatformFileThatIsNotJsonIsAnErrorOfTheProfile) {
  PlannedJob p("command: python main.py\n");
  p.profile.files.push_back({"/etc/config.json", "{\"hosts\": {{hosts.json}},", {p.profile.file, 7, 3}});
  auto plan = plan::make_plan(p.job, p.profile, {},
                              {p.dir.path() / "run", "/src/emulator", "job-1", {}, {}, true, {}, {}, {}, {}});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().exit_status(), 2);
  EXPECT_EQ(plan.error().where.line, 7);
}

TEST(PlanPlanner, AProfileFolderThatIsRootOnceFilledInIsAnErrorOfTheProfile) {
  PlannedJob p("command: python main.py\n");
  p.profile.mounts.code = "/";
  auto plan = plan::make_plan(p.job, p.profile, {},
                              {p.dir.path() / "run", "/src/emulator", "job-1", {}, {}, true, {}, {}, {}, {}});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().exit_status(), 2);
  EXPECT_EQ(plan.error().message,
            "\"/\" gives \"/\", which is not an absolute path inside the container without \".\", \"..\" or "
            "\"//\" (nor \"/\"): correct the profile");
}

TEST(PlanPlanner, TheContainersHostsFileIsBoundFromTheRunFolder) {
  PlannedJob p("command: python main.py\n");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  const auto hosts = std::find_if(p.plan->mounts.begin(), p.plan->mounts.end(),
                                  [](const auto& m) { return m.destination == "/etc/hosts"; });
  ASSERT_NE(hosts, p.plan->mounts.end());
  EXPECT_TRUE(hosts->read_only);
  EXPECT_EQ(hosts->source.parent_path().parent_path(), p.plan->run_dir / "platform");
  const auto file = std::find_if(p.plan->files.begin(), p.plan->files.end(),
                                 [&](const auto& f) { return f.path == hosts->source; });
  ASSERT_NE(file, p.plan->files.end());
  EXPECT_NE(file->content.find("127.0.0.1\tlocalhost\n"), std::string::npos);
  EXPECT_NE(file->content.find("\t" + p.plan->hostname + "\n"), std::string::npos);
}

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

TEST(PlanPlanner, AWritableCodeFolderIsACopyOnWriteLayerOfTheRunWithItsKeptFolders) {
  PlannedJob p("command: python main.py\n", "azureml");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  const std::string code = "/mnt/azureml/cr/j/job-1/exe/wd";
  const auto* mount = p.mount_at(code);
  ASSERT_NE(mount, nullptr);
  EXPECT_FALSE(mount->read_only);
  EXPECT_EQ(mount->source, p.job.code_dir) << "the user's code is the lower layer";
  EXPECT_EQ(mount->overlay_dir, p.dir.path() / "run" / "code");
  auto config = sandbox::make_oci_config(*p.plan, "/r", "/preflight/x");
  for (const auto& m : config["mounts"]) {
    if (m["destination"] != code) continue;
    EXPECT_EQ(m["source"], (p.dir.path() / "run" / "code" / "merged").string());
  }
  // AzureML uploads ./outputs and ./logs: kept folders of the run, bound after the code.
  const auto* outputs = p.mount_at(code + "/outputs");
  ASSERT_NE(outputs, nullptr);
  EXPECT_EQ(outputs->kind, model::MountFact::Kind::Output);
  EXPECT_GT(outputs - mount, 0);
  EXPECT_NE(p.mount_at(code + "/logs"), nullptr);
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
  EXPECT_EQ(p.env("PREFLIGHT_INPUTS"), "/hdfs/data/digits")
      << "the harness's data stage watches the input mounts";
}

TEST(PlanPlanner, TheJobsOwnPlacesReplaceTheProfiles) {
  // A volume's mountPath (mount:) and a container's workingDir (code_mount:), as another
  // platform's job file gives them.
  PlannedJob p(
      "command: python main.py --data ${{inputs.digits}}\ncode_mount: /opt/app\n"
      "inputs:\n  digits: {path: ./data, mount: /data}\n");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  EXPECT_EQ(p.plan->command, "python main.py --data /data");
  EXPECT_EQ(p.plan->process.cwd, "/opt/app");  // the profile's working_dir is {{code}}
  ASSERT_NE(p.mount_at("/opt/app"), nullptr);
  EXPECT_EQ(p.mount_at("/opt/app")->kind, model::MountFact::Kind::Code);
  ASSERT_NE(p.mount_at("/data"), nullptr);
  EXPECT_TRUE(p.mount_at("/data")->read_only);
  EXPECT_EQ(p.env("PHILLY_INPUT_DIGITS"), "/data");
  EXPECT_EQ(p.mount_at("/hdfs/data/digits"), nullptr);
}

TEST(PlanPlanner, APlaceTheJobNamesMustBeItsOwn) {
  const auto error_of = [](const std::string& yaml) {
    PlannedJob p(yaml);
    if (p.plan.ok()) return std::string("planned");
    const std::string error = p.plan.error().str();
    return error.substr(error.find("job.yaml"));  // from the job file's name on
  };
  EXPECT_EQ(
      error_of("command: x\ninputs:\n  a: {path: ./data, mount: /data}\n  b: {path: ./data, mount: /data}\n"),
      "job.yaml:4:3: mount: /data is the place of input \"a\" (/data); give each input and output a place "
      "of its own, outside the others");
  EXPECT_EQ(
      error_of(
          "command: x\ninputs:\n  a: {path: ./data, mount: /data/a}\n  b: {path: ./data, mount: /data}\n"),
      "job.yaml:4:3: mount: /data is around input \"a\" (/data/a); give each input and output a place of its "
      "own, outside the others");
  EXPECT_EQ(
      error_of("command: x\ncode_mount: /app\noutputs:\n  o: {mount: /app/out}\n"),
      "job.yaml:4:3: mount: /app/out is inside the code (/app); give each input and output a place of its "
      "own, outside the others");
  EXPECT_EQ(
      error_of("command: x\noutputs:\n  o: {mount: /opt/preflight}\n"),
      "job.yaml:3:3: mount: /opt/preflight would hide or lie in Preflight's own /opt/preflight/emulator; "
      "give another place");
  EXPECT_EQ(
      error_of("command: x\ncode_mount: /opt/preflight/run/x\n"),
      "job.yaml:2:13: mount: /opt/preflight/run/x would hide or lie in Preflight's own /opt/preflight/run; "
      "give another place");
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
  PlannedJob p(
      "command: python main.py\nresources: {gpus: 2}\n"
      "dryrun:\n  args: {epochs: 3, lr: 0.5, resume: false, arch: resnet18}\n");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  EXPECT_EQ(p.env("PREFLIGHT_GPUS"), "2");
  EXPECT_EQ(p.env("PREFLIGHT_GPU_NAME"), p.profile.gpu.name);
  EXPECT_EQ(p.env("PREFLIGHT_GPU_MEMORY"), std::to_string(p.profile.gpu.memory_bytes));
  EXPECT_EQ(nlohmann::json::parse(p.env("PREFLIGHT_CLAMP_ARGS")),
            nlohmann::json::parse(R"({"epochs": 3, "lr": 0.5, "resume": false, "arch": "resnet18"})"));
}

TEST(PlanPlanner, AnArgumentNestedFarTooDeepReachesTheHarnessAsText) {
  // Read as JSON, 100,000 brackets crashed the planner (issue 30); as text the harness passes
  // it on as the job wrote it.
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  PlannedJob p("command: python main.py\ndryrun:\n  args: {arch: \"" + deep + "\"}\n");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  EXPECT_EQ(nlohmann::json::parse(p.env("PREFLIGHT_CLAMP_ARGS")), nlohmann::json({{"arch", deep}}));
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

TEST(PlanPlanner, AJobWithoutSetupStartsThePlatformsLauncherItself) {
  PlannedJob p(kSageMakerJob, "sagemaker");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  std::vector<std::string> expected = p.profile.launcher;
  expected.push_back(p.plan->command);
  EXPECT_EQ(p.plan->process.args, expected);
  // No shell stands between the runtime and the launcher to drop a name that is not an identifier.
  EXPECT_EQ(p.env("SM_HP_LEARNING-RATE"), "0.01");
}

TEST(PlanPlanner, VariablesThatAreNotShellIdentifiersAreSetAgainBeforeTheLauncher) {
  PlannedJob p(std::string("setup: pip install --user -r requirements.txt\n") + kSageMakerJob, "sagemaker");
  ASSERT_TRUE(p.plan.ok()) << p.plan.error().str();
  const auto& args = p.plan->process.args;
  // launch.sh SETUP COMMAND, then env NAME=VALUE... and the platform's launcher.
  std::vector<std::string> expected = {"/usr/bin/env", "SM_HP_LEARNING-RATE=0.01", "SM_HP_USE-CUDA=true",
                                       "/bin/bash", "-c"};
  ASSERT_GE(args.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(args.begin() + 4, args.end()), expected);
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
