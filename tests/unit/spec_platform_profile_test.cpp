#include <gtest/gtest.h>
#include <sys/stat.h>

#include "spec/platform_profile.hpp"
#include "spec/template.hpp"
#include "test_support.hpp"

namespace preflight::spec {
namespace {

using preflight::testing::TempDir;

std::filesystem::path shipped() { return preflight::testing::source_dir() / "policies" / "platforms"; }

const EnvTemplate* find(const std::vector<EnvTemplate>& env, const std::string& name) {
  for (const EnvTemplate& entry : env) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

void expect_error(const Result<PlatformProfile>& profile, int line, int column, const std::string& message) {
  ASSERT_FALSE(profile.ok()) << "loaded without error";
  EXPECT_EQ(profile.error().exit_status(), 2);
  EXPECT_EQ(profile.error().where.line, line) << profile.error().str();
  EXPECT_EQ(profile.error().where.column, column) << profile.error().str();
  EXPECT_EQ(profile.error().message, message);
}

TEST(SpecProfile, ShippedPhillyLoads) {
  auto profile = load_platform("philly", shipped());
  ASSERT_TRUE(profile.ok()) << profile.error().str();
  EXPECT_EQ(profile->name, "philly");
  EXPECT_EQ(profile->file, shipped() / "philly.yaml");
  EXPECT_EQ(profile->default_image, "pytorch");
  EXPECT_EQ(profile->user.name, "job");
  EXPECT_EQ(profile->user.uid, 1000u);
  EXPECT_EQ(profile->user.gid, 1000u);
  EXPECT_EQ(profile->user.home, "/home/job");
  EXPECT_FALSE(profile->user.sudo);
  EXPECT_FALSE(profile->network);
  EXPECT_EQ(profile->mounts.working_dir, "{{code}}");
  EXPECT_NE(profile->mounts.input.find("{{name}}"), std::string::npos);
  EXPECT_NE(profile->mounts.output.find("{{name}}"), std::string::npos);
  EXPECT_EQ(profile->limits.shm_bytes, 64ull << 20);
  EXPECT_EQ(profile->limits.memory_bytes, 16ull << 30);
  EXPECT_GT(profile->limits.pids, 0);
  EXPECT_EQ(profile->gpu.name, "Tesla P100-PCIE-16GB");
  EXPECT_EQ(profile->gpu.memory_bytes, 16ull << 30);
  EXPECT_EQ(profile->launcher, (std::vector<std::string>{"/bin/bash", "-c"}));
  EXPECT_GT(profile->retry_attempts, 1);
  ASSERT_NE(find(profile->environment, "CUDA_VISIBLE_DEVICES"), nullptr);
  EXPECT_EQ(find(profile->environment, "CUDA_VISIBLE_DEVICES")->value, "{{gpus.list}}");
  ASSERT_NE(find(profile->environment, "HOME"), nullptr);
  ASSERT_NE(find(profile->environment, "PATH"), nullptr);
  ASSERT_NE(find(profile->environment, "PHILLY_JOB_ID"), nullptr);
  EXPECT_GT(find(profile->environment, "PHILLY_JOB_ID")->where.line, 0);
  ASSERT_EQ(profile->input_environment.size(), 1u);
  EXPECT_EQ(profile->input_environment[0].name, "PHILLY_INPUT_{{NAME}}");
  EXPECT_EQ(profile->input_environment[0].value, "{{path}}");
}

TEST(SpecProfile, EveryShippedProfileLoads) {
  const auto names = list_platforms(shipped());
  for (const char* platform : {"philly", "sagemaker", "azureml", "vertex", "kubeflow", "slurm"})
    EXPECT_NE(std::find(names.begin(), names.end(), platform), names.end()) << platform;
  for (const std::string& name : names) {
    auto profile = load_platform(name, shipped());
    EXPECT_TRUE(profile.ok()) << name << ": " << profile.error().str();
  }
}

TEST(SpecProfile, ShippedSageMakerRunsAsRootWithItsFilesAndHyperparameters) {
  auto profile = load_platform("sagemaker", shipped());
  ASSERT_TRUE(profile.ok()) << profile.error().str();
  EXPECT_EQ(profile->user.uid, 0u);
  EXPECT_EQ(profile->hostname, "algo-1");
  EXPECT_TRUE(profile->hyperparameters.arguments);
  ASSERT_EQ(profile->hyperparameters.environment.size(), 1u);
  EXPECT_EQ(profile->hyperparameters.environment[0].name, "SM_HP_{{NAME}}");
  ASSERT_EQ(profile->files.size(), 3u);
  EXPECT_EQ(profile->files[0].path, "/opt/ml/input/config/hyperparameters.json");
  EXPECT_GT(profile->files[0].where.line, 0);
  EXPECT_EQ(
      profile->input_config_json,
      R"({"RecordWrapperType":"None","S3DistributionType":"FullyReplicated","TrainingInputMode":"File"})");
  EXPECT_EQ(profile->mounts.kept.front(), "/opt/ml/model");
}

TEST(SpecProfile, UnknownNameSuggestsAShippedOne) {
  TempDir dir;
  dir.write("philly.yaml", "name: philly\n");
  dir.write("slurm.yml", "name: slurm\n");
  dir.write("README.md", "not a profile\n");
  EXPECT_EQ(list_platforms(dir.path()), (std::vector<std::string>{"philly", "slurm"}));
  auto profile = load_platform("phily", dir.path());
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.error().exit_status(), 2);
  EXPECT_EQ(profile.error().message,
            "unknown platform \"phily\"; did you mean \"philly\"? (shipped: philly, slurm)");
  auto far = load_platform("kubernetes", dir.path());
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.error().message, "unknown platform \"kubernetes\" (shipped: philly, slurm)");
  EXPECT_TRUE(load_platform("slurm", dir.path()).ok());
}

TEST(SpecProfile, LoadsAFileByPath) {
  TempDir dir;
  auto file = dir.write("mine/custom.yaml", R"(description: our cluster
default_image: python
user: {name: trainer, uid: 2000, gid: 2000, home: /home/trainer, sudo: no}
mounts:
  code: /workspace/code
  input: /data/{{name}}
  output: /outputs/{{NAME}}
  scratch: /scratch
  working_dir: /workspace
  writable: [/tmp, /var/tmp]
network: true
limits: {memory: 8Gi, shm: 1g, pids: 512, cpus: 2.5}
gpu: {name: NVIDIA A100-SXM4-40GB, memory: 40Gi}
environment:
  JOB: "{{ job.name }}-{{job.id}}"
  RANK: "{{node.rank}}"
  DATA_ROOT: /data
input_environment:
  DATA_{{NAME}}: "{{path}}"
output_environment:
  OUT_{{NAME}}: "{{ path }}"
launcher: [/bin/sh, -c]
retry: {attempts: 1}
)");
  auto profile = load_platform(file.string(), "/nonexistent");
  ASSERT_TRUE(profile.ok()) << profile.error().str();
  EXPECT_EQ(profile->name, "custom");
  EXPECT_EQ(profile->default_image, "python");
  EXPECT_EQ(profile->user.uid, 2000u);
  EXPECT_TRUE(profile->network);
  EXPECT_EQ(profile->mounts.scratch, "/scratch");
  EXPECT_EQ(profile->mounts.writable, (std::vector<std::string>{"/tmp", "/var/tmp"}));
  EXPECT_EQ(profile->limits.memory_bytes, 8ull << 30);
  EXPECT_EQ(profile->limits.shm_bytes, 1ull << 30);
  EXPECT_EQ(profile->limits.pids, 512);
  EXPECT_DOUBLE_EQ(profile->limits.cpus, 2.5);
  EXPECT_EQ(profile->gpu.memory_bytes, 40ull << 30);
  ASSERT_EQ(profile->environment.size(), 3u);
  EXPECT_EQ(profile->environment[0].name, "JOB");
  EXPECT_EQ(profile->environment[0].where.line, 15);
  EXPECT_EQ(profile->environment[0].where.column, 9);  // inside the quotes
  EXPECT_EQ(profile->retry_attempts, 1);

  auto missing = load_platform((dir.path() / "other.yaml").string(), "/nonexistent");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("does not exist"), std::string::npos);
}

TEST(SpecProfile, ErrorsHaveLocationsAndSuggestions) {
  TempDir dir;
  auto load = [&](const std::string& yaml) {
    return load_platform(dir.write("p.yaml", yaml).string(), dir.path());
  };
  expect_error(load("user:\n  uid: root\n"), 2, 8, "user.uid: expected an integer, got \"root\"");
  expect_error(load("limits:\n  shm_size: 1Gi\n"), 2, 3,
               "unknown key \"shm_size\" in limits (valid keys: memory, shm, disk, pids, cpus)");
  expect_error(load("limits:\n  memroy: 1Gi\n"), 2, 3,
               "unknown key \"memroy\" in limits; did you mean \"memory\"?");
  expect_error(load("networks: false\n"), 1, 1, "unknown key \"networks\"; did you mean \"network\"?");
  expect_error(load("limits: {memory: 16 GB}\n"), 1, 18,
               "limits.memory: expected a size such as \"16Gi\", \"64Mi\" or \"1G\", got \"16 GB\"");
  expect_error(load("environment:\n  ID: \"run-{{job.idd}}\"\n"), 2, 12,
               "environment.ID: unknown template variable \"{{job.idd}}\"; did you mean \"job.id\"?");
  expect_error(load("environment:\n  P: \"{{path}}\"\n"), 2, 7,
               "environment.P: unknown template variable \"{{path}}\" ({{path}} exists only in "
               "input_environment and output_environment entries and in mounts.input and "
               "mounts.output)");
  expect_error(load("mounts:\n  input: /data\n"), 2, 10,
               "mounts.input: must contain {{name}} so that each input gets its own folder");
  expect_error(
      load("mounts:\n  code: code\n"), 2, 9,
      "mounts.code: expected an absolute path inside the container, without \".\", \"..\" or \"//\", "
      "got \"code\"");
  expect_error(load("launcher: []\n"), 1, 11, "launcher: must name a program, e.g. [/bin/sh, -c]");
  expect_error(load("retry: {attempts: 0}\n"), 1, 19, "retry.attempts: must be between 1 and 100, got 0");
  expect_error(load("network: maybe\n"), 1, 10, "network: expected true or false, got \"maybe\"");
  expect_error(load("input_environment:\n  IN-{{NAME}}: x\n"), 2, 3,
               "environment variable name \"IN-{{NAME}}\" must be letters, digits and \"_\", not "
               "starting with a digit");
  expect_error(load("name: a\nname: b\n"), 2, 1, "duplicate key \"name\" (first given on line 1)");
  expect_error(load("files:\n  config.json: x\n"), 2, 3,
               "files: \"config.json\" must be an absolute path inside the container, without \".\", \"..\" "
               "or \"//\"");
  expect_error(load("hyperparameters:\n  environment:\n    HP_{{NAME}}: \"{{path}}\"\n"), 3, 19,
               "hyperparameters.environment.HP_{{NAME}}: unknown template variable \"{{path}}\"");
  expect_error(load("hyperparameters: {arguments: maybe}\n"), 1, 30,
               "hyperparameters.arguments: expected true or false, got \"maybe\"");
  expect_error(load("mounts: {kept: [model]}\n"), 1, 16,
               "mounts.kept: expected an absolute path inside the container, without \".\", \"..\" or "
               "\"//\" other than \"/\", got \"model\"");
  expect_error(load("user: [a]\n"), 1, 7, "user: expected a map of keys, got a list");
  // Paths that would climb out of the container's root, or out of the run folder on the host.
  expect_error(load("user: {home: /../../../../tmp/x}\n"), 1, 14,
               "user.home: expected an absolute path inside the container, without \".\", \"..\" or \"//\", "
               "got \"/../../../../tmp/x\"");
  expect_error(load("mounts: {writable: [/../../../../X]}\n"), 1, 20,
               "mounts.writable: expected an absolute path inside the container, without \".\", \"..\" or "
               "\"//\" other than \"/\", got \"/../../../../X\"");
  expect_error(load("mounts: {kept: [\"{{code}}/../../x\"]}\n"), 1, 16,
               "mounts.kept: expected an absolute path inside the container, without \".\", \"..\" or "
               "\"//\" other than \"/\", got \"{{code}}/../../x\"");
  expect_error(load("mounts: {scratch: /a/./b}\n"), 1, 19,
               "mounts.scratch: expected an absolute path inside the container, without \".\", \"..\" or "
               "\"//\", got \"/a/./b\"");
  expect_error(load("files:\n  /etc/../../x: y\n"), 2, 3,
               "files: \"/etc/../../x\" must be an absolute path inside the container, without \".\", \"..\" "
               "or \"//\"");
  expect_error(load("user: {name: x\n"), 2, 1, "invalid YAML: end of map flow not found");
}

TEST(SpecProfile, AFileNamedByAJobIsReadOnlyWhenItIsAProfile) {
  TempDir dir;
  auto secret = dir.write("shadow", "root:$y$j9T$secret:19000:0:99999:7:::\n");
  auto profile = load_platform(secret.string(), shipped());
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.error().exit_status(), 2);
  EXPECT_EQ(profile.error().message.find("secret"), std::string::npos) << profile.error().message;
  EXPECT_NE(profile.error().message.find("is not a .yaml or .yml file"), std::string::npos);
  // A FIFO or a device is refused at once: never read until it ends.
  ASSERT_EQ(::mkfifo((dir.path() / "fifo.yaml").c_str(), 0600), 0);
  auto fifo = load_platform((dir.path() / "fifo.yaml").string(), shipped());
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.error().message.find("is not a regular file"), std::string::npos) << fifo.error().message;
}

TEST(SpecUnits, Sizes) {
  EXPECT_EQ(*parse_size("16Gi"), 16ull << 30);
  EXPECT_EQ(*parse_size("64Mi"), 64ull << 20);
  EXPECT_EQ(*parse_size("512M"), 512000000ull);
  EXPECT_EQ(*parse_size("1G"), 1000000000ull);
  EXPECT_EQ(*parse_size("2g"), 2ull << 30);  // Docker's --shm-size
  EXPECT_EQ(*parse_size("1.5Gi"), 3ull << 29);
  EXPECT_EQ(*parse_size("4096"), 4096ull);
  EXPECT_EQ(*parse_size("1KiB"), 1024ull);
  for (const char* bad : {"", "Gi", "16 Gi", "16GG", "-1Gi", "sixteen", "99999999999999Ti"}) {
    EXPECT_FALSE(parse_size(bad).ok()) << bad;
  }
  EXPECT_EQ(parse_size("16GG").error().message,
            "expected a size such as \"16Gi\", \"64Mi\" or \"1G\", got \"16GG\"");
}

TEST(SpecUnits, Durations) {
  using namespace std::chrono_literals;
  EXPECT_EQ(*parse_duration("10m"), 10min);
  EXPECT_EQ(*parse_duration("90s"), 90s);
  EXPECT_EQ(*parse_duration("1h30m"), 90min);
  EXPECT_EQ(*parse_duration("500ms"), 500ms);
  EXPECT_EQ(*parse_duration("1.5s"), 1500ms);
  EXPECT_EQ(*parse_duration("1d"), 24h);
  for (const char* bad : {"", "10", "ten minutes", "10 m", "10x", "m10", "-5s"}) {
    EXPECT_FALSE(parse_duration(bad).ok()) << bad;
  }
}

TEST(SpecUnits, DurationsAreWrittenAsTheyAreRead) {
  using namespace std::chrono_literals;
  EXPECT_EQ(duration_text(90s), "1m30s");
  EXPECT_EQ(duration_text(2h), "2h");
  EXPECT_EQ(duration_text(36h + 5s), "1d12h5s");
  EXPECT_EQ(duration_text(0s), "0s");
  for (const auto seconds : {1s, 59s, 3601s, 86399s, 172800s, 2419200s})
    EXPECT_EQ(*parse_duration(duration_text(seconds)), seconds) << duration_text(seconds);
}

}  // namespace
}  // namespace preflight::spec
