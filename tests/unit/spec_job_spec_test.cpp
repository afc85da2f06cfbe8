#include <gtest/gtest.h>

#include "spec/job_spec.hpp"
#include "test_support.hpp"

namespace preflight::spec {
namespace {

using preflight::testing::TempDir;

// Loads `yaml` as TempDir/job/job.yaml, with a data/ folder beside it.
Result<JobSpec> load(const TempDir& dir, const std::string& yaml) {
  dir.write("job/data/train.csv", "x,y\n");
  dir.write("job/main.py", "print('hi')\n");
  return load_job(dir.write("job/job.yaml", yaml));
}

void expect_error(const Result<JobSpec>& job, int line, int column, const std::string& message) {
  ASSERT_FALSE(job.ok()) << "loaded without error";
  EXPECT_EQ(job.error().kind, ErrorKind::BadInput);
  EXPECT_EQ(job.error().exit_status(), 2);
  EXPECT_EQ(job.error().where.line, line) << job.error().str();
  EXPECT_EQ(job.error().where.column, column) << job.error().str();
  EXPECT_EQ(job.error().message, message);
  EXPECT_EQ(job.error().where.file.filename(), "job.yaml");
}

TEST(SpecJob, LoadsTheDocumentedExample) {
  TempDir dir;
  auto job = load(dir, R"(name: mnist
platform: philly
image: pytorch
code: .
setup: pip install --user -r requirements.txt
command: python main.py --data ${{inputs.mnist}} --save-dir ${{outputs.model}} --epochs 14
inputs:
  mnist: {path: ./data}
outputs:
  model: {}
environment_variables: {OMP_NUM_THREADS: "4", SEED: 7}
resources: {gpus: 4, nodes: 1}
dryrun: {steps: 3, timeout: 10m}
)");
  ASSERT_TRUE(job.ok()) << job.error().str();
  EXPECT_EQ(job->name, "mnist");
  EXPECT_EQ(job->platform, "philly");
  EXPECT_EQ(job->platform_where.line, 2);
  EXPECT_EQ(job->platform_where.column, 11);
  EXPECT_EQ(job->image, "pytorch");
  EXPECT_EQ(job->code_dir, dir.path() / "job");
  EXPECT_EQ(job->file, dir.path() / "job" / "job.yaml");
  ASSERT_TRUE(job->setup.has_value());
  EXPECT_EQ(*job->setup, "pip install --user -r requirements.txt");
  EXPECT_EQ(job->command_where.line, 6);
  EXPECT_EQ(job->command_where.column, 10);
  ASSERT_EQ(job->inputs.size(), 1u);
  EXPECT_EQ(job->inputs[0].name, "mnist");
  EXPECT_EQ(job->inputs[0].path, dir.path() / "job" / "data");
  EXPECT_EQ(job->inputs[0].where.line, 8);
  EXPECT_FALSE(job->inputs[0].value.has_value());
  ASSERT_EQ(job->outputs.size(), 1u);
  EXPECT_EQ(job->outputs[0].name, "model");
  EXPECT_EQ(job->environment.at("OMP_NUM_THREADS"), "4");
  EXPECT_EQ(job->environment.at("SEED"), "7");
  EXPECT_EQ(job->gpus, 4);
  EXPECT_EQ(job->nodes, 1);
  EXPECT_EQ(job->dryrun.steps, 3);
  EXPECT_EQ(job->dryrun.timeout, std::chrono::minutes(10));
  EXPECT_TRUE(job->notes.empty());
}

TEST(SpecJob, DefaultsNameToTheFolderAndCodeToTheJobFolder) {
  TempDir dir;
  auto job = load(dir, "command: python main.py\n");
  ASSERT_TRUE(job.ok()) << job.error().str();
  EXPECT_EQ(job->name, "job");
  EXPECT_EQ(job->code_dir, dir.path() / "job");
  EXPECT_TRUE(job->platform.empty());
  EXPECT_TRUE(job->image.empty());
  EXPECT_FALSE(job->setup.has_value());
  EXPECT_EQ(job->gpus, 0);
  EXPECT_EQ(job->nodes, 1);
  EXPECT_EQ(job->dryrun.steps, 2);
  EXPECT_EQ(job->dryrun.timeout, std::chrono::minutes(10));
}

// The shape of AzureML's public command-job examples (azureml-examples, cli/jobs).
TEST(SpecJob, AcceptsAnAzureMLCommandJob) {
  TempDir dir;
  dir.write("job/src/train.py", "");
  auto job = load(dir, R"($schema: https://azuremlschemas.azureedge.net/latest/commandJob.schema.json
type: command
code: src
command: >-
  python train.py
  --epochs ${{inputs.epochs}}
  --learning-rate ${{ inputs.learning_rate }}
  --data-dir ${{inputs.cifar}}
  --output ${{outputs.model_dir}}
inputs:
  epochs: 1
  learning_rate: 0.2
  cifar:
    type: uri_folder
    path: ./data
    mode: ro_mount
outputs:
  model_dir:
    type: uri_folder
    mode: rw_mount
environment: azureml:AzureML-pytorch-1.9-ubuntu18.04-py37-cuda11-gpu@latest
compute: azureml:gpu-cluster
distribution:
  type: pytorch
  process_count_per_instance: 1
resources:
  instance_count: 2
  shm_size: 2g
display_name: pytorch-cifar-distributed-example
experiment_name: pytorch-cifar-distributed-example
description: Train a basic convolutional neural network (CNN) with PyTorch on CIFAR-10.
tags: {framework: pytorch}
)");
  ASSERT_TRUE(job.ok()) << job.error().str();
  EXPECT_EQ(job->code_dir, dir.path() / "job" / "src");
  EXPECT_EQ(job->nodes, 2);
  ASSERT_TRUE(job->shm_bytes.has_value());
  EXPECT_EQ(*job->shm_bytes, 2ull << 30);
  ASSERT_EQ(job->inputs.size(), 3u);
  EXPECT_EQ(job->inputs[0].value, "1");
  EXPECT_EQ(job->inputs[1].value, "0.2");
  EXPECT_EQ(job->inputs[2].path, dir.path() / "job" / "data");
  ASSERT_EQ(job->notes.size(), 1u);
  EXPECT_EQ(job->notes[0].where.line, 21);
}

TEST(SpecJob, HyperparametersKeepTheirOrderAndWhetherTheyAreTyped) {
  TempDir dir;
  auto job =
      load(dir,
           "command: python main.py\n"
           "hyperparameters: {epochs: 2, learning-rate: 0.01, optimizer: adam, tag: \"7\", cuda: true}\n");
  ASSERT_TRUE(job.ok()) << job.error().str();
  ASSERT_EQ(job->hyperparameters.size(), 5u);
  EXPECT_EQ(job->hyperparameters[1].name, "learning-rate");
  EXPECT_EQ(job->hyperparameters[1].value, "0.01");
  EXPECT_TRUE(job->hyperparameters[1].typed);
  EXPECT_FALSE(job->hyperparameters[2].typed);  // adam
  EXPECT_FALSE(job->hyperparameters[3].typed);  // "7", quoted
  EXPECT_TRUE(job->hyperparameters[4].typed);   // true
  expect_error(load(dir, "command: x\nhyperparameters:\n  --lr: 1\n"), 3, 3,
               "hyperparameter name \"--lr\" must be letters, digits, \"_\", \"-\" and \".\"");
  expect_error(load(dir, "command: x\nhyperparameters:\n  lr:\n"), 3, 3,
               "hyperparameters.lr: expected a value, got nothing (write \"\" for an empty string)");
}

TEST(SpecJob, MalformedYamlHasALocation) {
  TempDir dir;
  expect_error(load(dir, "command: python main.py\nresources: {gpus: 4\n"), 3, 1,
               "invalid YAML: end of map flow not found");
  expect_error(load(dir, "command: python main.py\nresources:\n  gpus: 4\n   nodes: 1\n"), 4, 9,
               "invalid YAML: illegal map value");
  expect_error(load(dir, "command: python main.py\n---\nname: second\n"), 3, 1,
               "expected one YAML document, found another here (remove the \"---\")");
  expect_error(load(dir, "command: python main.py\nname: caf\xE9\n"), 2, 10,
               "not UTF-8: the byte 0xE9 begins no character; save the file as UTF-8");
  expect_error(load(dir, std::string("command: python main.py\nname: a\0b\n", 34)), 2, 8,
               "the control character 0x00 cannot be in a YAML file; remove it");
  // yaml-cpp's LoadAll parses this null document forever, growing until memory runs out.
  expect_error(load(dir, "\n,\n"), 2, 1, "invalid YAML: nothing can start here");
}

TEST(SpecJob, WrongTypeNamesTheKey) {
  TempDir dir;
  expect_error(load(dir, "command: python main.py\nresources:\n  gpus: four\n"), 3, 9,
               "resources.gpus: expected an integer, got \"four\"");
  expect_error(load(dir, "command: [python, main.py]\n"), 1, 10, "command: expected a string, got a list");
  expect_error(load(dir, "command: x\ninputs: [a, b]\n"), 2, 9, "inputs: expected a map of keys, got a list");
  expect_error(load(dir, "- command: x\n"), 1, 1, "the top level: expected a map of keys, got a list");
}

TEST(SpecJob, MissingCommand) {
  TempDir dir;
  expect_error(load(dir, "name: mnist\nimage: pytorch\n"), 1, 1,
               "missing required key \"command\" (the shell command that starts training, e.g. "
               "command: python train.py)");
  expect_error(load(dir, "command: \"  \"\n"), 1, 10, "command: must not be empty");
  expect_error(load(dir, ""), 1, 1, "the job file is empty; it needs at least command:");
}

TEST(SpecJob, UnknownKeysSuggestTheNearestValidKey) {
  TempDir dir;
  expect_error(load(dir, "command: x\nresources:\n  gpu: 4\n"), 3, 3,
               "unknown key \"gpu\" in resources; did you mean \"gpus\"?");
  expect_error(load(dir, "comand: x\n"), 1, 1, "unknown key \"comand\"; did you mean \"command\"?");
  expect_error(load(dir, "command: x\nenviroment_variables: {A: b}\n"), 2, 1,
               "unknown key \"enviroment_variables\"; did you mean \"environment_variables\"?");
  expect_error(load(dir, "command: x\ndryrun: {stpes: 2}\n"), 2, 10,
               "unknown key \"stpes\" in dryrun; did you mean \"steps\"?");
  expect_error(load(dir, "command: x\ndryrun: {zzz: 2}\n"), 2, 10,
               "unknown key \"zzz\" in dryrun (valid keys: steps, batch, timeout, args, sample_above)");
  expect_error(load(dir, "command: x\ninputs:\n  d: {path: ./data, pth: x}\n"), 3, 21,
               "unknown key \"pth\" in inputs.d; did you mean \"path\"?");
}

TEST(SpecJob, MissingInputPathSaysWhereItLookedAndWhatToDo) {
  TempDir dir;
  auto job = load(dir, "command: x\ninputs:\n  mnist:\n    path: ./mnist-data\n");
  const std::string folder = (dir.path() / "job").string();
  expect_error(job, 4, 11,
               "inputs.mnist.path: input \"mnist\": " + folder +
                   "/mnist-data does not exist "
                   "(path \"./mnist-data\", relative to " +
                   folder +
                   "); put a local copy or small "
                   "sample of the data the platform will mount there, or correct path:");
  // The string shorthand reports at the value too.
  auto shorthand = load(dir, "command: x\ninputs:\n  mnist: ../elsewhere\n");
  ASSERT_FALSE(shorthand.ok());
  EXPECT_EQ(shorthand.error().where.line, 3);
  EXPECT_EQ(shorthand.error().where.column, 10);
}

TEST(SpecJob, RejectsUnmappedCloudPathsAndWrongTypes) {
  TempDir dir;
  expect_error(load(dir, "command: x\ninputs:\n  d: {path: 'azureml:cifar@latest'}\n"), 3, 13,
               "inputs.d.path: \"azureml:cifar@latest\" is where the platform has the data; Preflight "
               "needs a local copy or sample of it: add --map azureml:cifar@latest=./LOCAL to the command, "
               "or paths: {\"azureml:cifar@latest\": ./LOCAL} to the job file");
  auto file = load(dir, "command: x\ninputs:\n  d: {type: uri_folder, path: data/train.csv}\n");
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.error().message.find("is not a folder; use type: uri_file"), std::string::npos);
  expect_error(load(dir, "command: x\ninputs:\n  d: {type: uri_foldr, path: data}\n"), 3, 13,
               "inputs.d.type: unknown value \"uri_foldr\"; did you mean \"uri_folder\"? (one of "
               "uri_folder, uri_file, mltable, mlflow_model, custom_model, triton_model)");
  auto ok = load(dir, "command: x\ninputs:\n  d: {type: uri_file, path: data/train.csv}\n");
  EXPECT_TRUE(ok.ok()) << ok.error().str();
}

TEST(SpecJob, MissingCodeFolder) {
  TempDir dir;
  const std::string folder = (dir.path() / "job").string();
  expect_error(load(dir, "code: src\ncommand: x\n"), 1, 7,
               "code: code folder " + folder + "/src does not exist (\"src\", relative to " + folder +
                   "); set code: to the folder holding your training code");
  expect_error(load(dir, "code: main.py\ncommand: x\n"), 1, 7,
               "code: " + folder +
                   "/main.py is not a folder; code: names the folder that is "
                   "uploaded with the job");
}

TEST(SpecJob, DuplicateNames) {
  TempDir dir;
  expect_error(load(dir, "command: x\ninputs:\n  a: data\n  b: data\n  a: data\n"), 5, 3,
               "duplicate key \"a\" in inputs (first given on line 3)");
  expect_error(load(dir, "command: x\ncommand: y\n"), 2, 1,
               "duplicate key \"command\" (first given on line 1)");
  expect_error(load(dir, "command: x\noutputs:\n  model: {}\n  Model: {}\n"), 4, 3,
               "output \"Model\" differs from output \"model\" (line 3) only in case; the "
               "platform exports both as the same upper-case variable");
  expect_error(load(dir, "command: x\noutputs:\n  my-model: {}\n"), 3, 3,
               "output name \"my-model\" must be an identifier (letters, digits and \"_\", not "
               "starting with a digit)");
}

TEST(SpecJob, NumbersAndDurationsAreChecked) {
  TempDir dir;
  expect_error(load(dir, "command: x\ndryrun: {steps: -3}\n"), 2, 17,
               "dryrun.steps: must be between 1 and 100000, got -3");
  expect_error(load(dir, "command: x\nresources: {gpus: -1}\n"), 2, 19,
               "resources.gpus: must be between 0 and 16, got -1");
  expect_error(load(dir, "command: x\nresources: {gpus: 1000000}\n"), 2, 19,
               "resources.gpus: must be between 0 and 16, got 1000000");
  expect_error(load(dir, "command: x\nresources: {nodes: 99999999999}\n"), 2, 20,
               "resources.nodes: must be between 1 and 4096, got 99999999999");
  expect_error(load(dir, "command: x\ndryrun:\n  timeout: 10 minutes\n"), 3, 12,
               "dryrun.timeout: expected a duration such as \"10m\", \"90s\" or \"1h30m\", got "
               "\"10 minutes\"");
  expect_error(load(dir, "command: x\ndryrun:\n  timeout: 0s\n"), 3, 12,
               "dryrun.timeout: must be longer than zero");
  expect_error(load(dir, "command: x\nresources: {nodes: 2, instance_count: 2}\n"), 2, 39,
               "resources.instance_count: give either resources.nodes or "
               "resources.instance_count, not both (nodes is on line 2)");
}

TEST(SpecJob, TheTimeLimitIsADurationOrAzureMLsSeconds) {
  TempDir dir;
  auto job = load(dir, "command: x\ntime_limit: 1h30m\n");
  ASSERT_TRUE(job.ok()) << job.error().str();
  EXPECT_EQ(job->time_limit, std::chrono::seconds(5400));
  EXPECT_EQ(job->time_limit_where.line, 2);
  EXPECT_EQ(job->time_limit_where.column, 13);
  auto azureml = load(dir, "command: x\nlimits:\n  timeout: 7200\n");
  ASSERT_TRUE(azureml.ok()) << azureml.error().str();
  EXPECT_EQ(azureml->time_limit, std::chrono::seconds(7200));
  EXPECT_EQ(azureml->time_limit_where.line, 3);
  EXPECT_FALSE(load(dir, "command: x\n")->time_limit.has_value());

  expect_error(load(dir, "command: x\ntime_limit: two hours\n"), 2, 13,
               "time_limit: expected a duration such as \"10m\", \"90s\" or \"1h30m\", got \"two hours\"");
  expect_error(load(dir, "command: x\ntime_limit: 500ms\n"), 2, 13, "time_limit: must be at least a second");
  expect_error(load(dir, "command: x\nlimits: {timeout: 2h}\n"), 2, 19,
               "limits.timeout: expected a whole number of seconds, got \"2h\"");
  expect_error(load(dir, "command: x\nlimits: {max_trials: 2}\n"), 2, 10,
               "unknown key \"max_trials\" in limits (valid keys: timeout)");
  expect_error(load(dir, "command: x\ntime_limit: 2h\nlimits: {timeout: 60}\n"), 3, 19,
               "limits.timeout: a second time limit; the first is at line 2");
}

// What the kernel or runc would refuse is refused here, with its place in job.yaml (exit 2).
TEST(SpecJob, ValuesNoProcessCanHoldAreErrors) {
  TempDir dir;
  expect_error(load(dir, "command: x\nenvironment_variables: {A: \"a\\0b\"}\n"), 2, 28,
               "environment_variables.A: holds a NUL character (\\0), which no command, path or environment "
               "value can hold");
  expect_error(load(dir, "command: \"python\\0 main.py\"\n"), 1, 10,
               "command: holds a NUL character (\\0), which no command, path or environment value can hold");
  expect_error(load(dir, "name: " + std::string(5000, 'a') + "\ncommand: x\n"), 1, 7,
               "name: is 5000 characters long; give a name of at most 128");
}

TEST(SpecJob, CodeAndInputsAreFoldersOrFilesOfTheUsers) {
  TempDir dir;
  expect_error(load(dir, "command: x\ncode: /\n"), 2, 7,
               "code: / is a system folder, not a job's code; set code: to the folder holding your "
               "training code");
  expect_error(load(dir, "command: x\ncode: /proc/self\n"), 2, 7,
               "code: /proc/self is a system folder, not a job's code; set code: to the folder holding "
               "your training code");
  auto zero = load(dir, "command: x\ninputs: {d: {path: /dev/zero}}\n");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().exit_status(), 2);
  EXPECT_NE(zero.error().message.find("/dev/zero is not a folder or a regular file"), std::string::npos)
      << zero.error().message;
}

TEST(SpecJob, AFoldersNameIsMadeAValidJobName) {
  TempDir dir;
  dir.write("my job (copy)/main.py", "");
  auto job = load_job(dir.write("my job (copy)/job.yaml", "command: x\n"));
  ASSERT_TRUE(job.ok()) << job.error().str();
  EXPECT_EQ(job->name, "my-job--copy-");
}

TEST(SpecJob, APlatformFileIsRelativeToTheJobFile) {
  TempDir dir;
  auto job = load(dir, "platform: ../profiles/ours.yaml\ncommand: x\n");
  ASSERT_TRUE(job.ok()) << job.error().str();
  EXPECT_EQ(job->platform, (dir.path() / "profiles" / "ours.yaml").string());
  auto named = load(dir, "platform: sagemaker\ncommand: x\n");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->platform, "sagemaker");
}

TEST(SpecJob, OnlyCommandJobs) {
  TempDir dir;
  expect_error(load(dir, "type: sweep\ncommand: x\n"), 1, 7,
               "type: only command jobs are supported, got \"sweep\"");
}

TEST(SpecJob, UnknownReferencePointsIntoTheCommand) {
  TempDir dir;
  expect_error(load(dir, "inputs: {mnist: data}\ncommand: python main.py --data ${{inputs.mnst}}\n"), 2, 32,
               "unknown input \"mnst\" in ${{inputs.mnst}}; did you mean \"mnist\"?");
  // Inside double quotes the column still lands on the "${{".
  expect_error(load(dir, "command: \"python main.py --out ${{outputs.model}}\"\n"), 1, 32,
               "unknown output \"model\" in ${{outputs.model}} (the job declares no outputs; "
               "add it under outputs:)");
  // In a block scalar the location is the scalar's start.
  expect_error(load(dir, "setup: |\n  echo ${{inputs.x}}\ncommand: x\n"), 1, 8,
               "unknown input \"x\" in ${{inputs.x}} (the job declares no inputs; add it under "
               "inputs:)");
  expect_error(load(dir, "command: echo ${{secrets.token}}\n"), 1, 15,
               "unsupported reference \"${{secrets.token}}\"; use ${{inputs.NAME}} or "
               "${{outputs.NAME}}");
}

TEST(SpecJob, SubstitutesReferences) {
  const SourceLocation where{"job.yaml", 6, 10};
  auto text =
      substitute_references("python main.py --data ${{ inputs.mnist }} --out ${{outputs.model}}/x",
                            {{"mnist", "/job/inputs/mnist"}}, {{"model", "/job/outputs/model"}}, where);
  ASSERT_TRUE(text.ok()) << text.error().str();
  EXPECT_EQ(*text, "python main.py --data /job/inputs/mnist --out /job/outputs/model/x");

  auto unknown =
      substitute_references("python main.py --data ${{inputs.mnst}}", {{"mnist", "/x"}}, {}, where);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().str(),
            "job.yaml:6:32: unknown input \"mnst\" in ${{inputs.mnst}}; did you mean \"mnist\"?");

  auto unclosed = substitute_references("echo ${{inputs.x", {{"x", "/x"}}, {}, where);
  ASSERT_FALSE(unclosed.ok());
  EXPECT_EQ(unclosed.error().str(), "job.yaml:6:15: unclosed \"${{\" (add \"}}\")");
  auto plain = substitute_references("echo no references $HOME {{x}}", {}, {}, where);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, "echo no references $HOME {{x}}");
}

TEST(SpecJob, MissingJobFile) {
  TempDir dir;
  auto job = load_job(dir.path() / "nope" / "job.yaml");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().exit_status(), 2);
  EXPECT_NE(job.error().message.find("does not exist"), std::string::npos);
}

TEST(SpecJob, CloudPathsMapToLocalCopies) {
  TempDir dir;
  dir.write("job/data/train/part-0.csv", "x\n");
  dir.write("elsewhere/imagenet/val/a.jpg", "x");
  const std::string yaml = R"(command: x
paths:
  s3://team-data: ./data
  "s3://team-data/train/": ./data/train
inputs:
  train: s3://team-data/train
  whole: {path: s3://team-data}
  val: {path: 'gs://vision/imagenet/val', mount: /gcs/vision/imagenet/val}
)";
  // Without a map for gs://vision the error says the exact --map to add, at the path.
  expect_error(
      load(dir, yaml), 8, 15,
      "inputs.val.path: \"gs://vision/imagenet/val\" is where the platform has the data; Preflight "
      "needs a local copy or sample of it: add --map gs://vision/imagenet/val=./LOCAL to the command, "
      "or paths: {\"gs://vision/imagenet/val\": ./LOCAL} to the job file");
  LoadOptions options;
  auto map = parse_path_map("gs://vision=elsewhere", dir.path());
  ASSERT_TRUE(map.ok()) << map.error().str();
  options.maps.push_back(*map);
  auto job = load_job(dir.path() / "job" / "job.yaml", options);
  ASSERT_TRUE(job.ok()) << job.error().str();
  ASSERT_EQ(job->inputs.size(), 3u);
  // The longest prefix that matches whole components wins; the cloud path is kept for messages.
  EXPECT_EQ(job->inputs[0].path, dir.path() / "job" / "data" / "train");
  EXPECT_EQ(job->inputs[0].cloud, "s3://team-data/train");
  EXPECT_EQ(job->inputs[1].path, dir.path() / "job" / "data");
  EXPECT_EQ(job->inputs[2].path, dir.path() / "elsewhere" / "imagenet" / "val");
  EXPECT_EQ(job->inputs[2].mount, "/gcs/vision/imagenet/val");
  EXPECT_TRUE(job->inputs[0].mount.empty());

  // s3://team-data does not map s3://team-data2; a copy that is missing says which map gave it.
  expect_error(
      load(dir, "command: x\npaths: {s3://team-data: ./data}\ninputs:\n  d: s3://team-data2/x\n"), 4, 6,
      "inputs.d: \"s3://team-data2/x\" is where the platform has the data; Preflight needs a local copy "
      "or sample of it: add --map s3://team-data2/x=./LOCAL to the command, or paths: "
      "{\"s3://team-data2/x\": ./LOCAL} to the job file");
  auto missing =
      load(dir, "command: x\npaths: {s3://team-data: ./data}\ninputs:\n  d: s3://team-data/nope\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(
      missing.error().message.find("does not exist (the local copy of s3://team-data/nope by paths: entry"),
      std::string::npos)
      << missing.error().message;
  expect_error(load(dir, "command: x\npaths: {./data: ./data}\n"), 2, 9,
               "paths: \"./data\" is not a cloud path; each key is where the platform has the data "
               "(s3://bucket/prefix, gs://bucket/path, azureml://datastores/..., pvc://claim)");
}

TEST(SpecJob, PathMapsFromTheCommandLine) {
  const std::filesystem::path base = "/work";
  auto cloud = parse_path_map("s3://bucket/a=b/c/", base);
  ASSERT_TRUE(cloud.ok());
  EXPECT_EQ(cloud->prefix, "s3://bucket/a");
  EXPECT_EQ(cloud->local, "/work/b/c");
  auto with_equals = parse_path_map("s3://bucket/k=v=./data", base);
  ASSERT_TRUE(with_equals.ok());
  EXPECT_EQ(with_equals->prefix, "s3://bucket/k");  // the first "=" after the scheme ends the prefix
  auto folder = parse_path_map("/datasets/imagenet/=./sample", base);
  ASSERT_TRUE(folder.ok());
  EXPECT_EQ(folder->prefix, "/datasets/imagenet");
  for (const char* bad : {"s3://bucket", "data=./x", "/=./x", "s3://bucket=", "/a/../b=./x"}) {
    auto map = parse_path_map(bad, base);
    ASSERT_FALSE(map.ok()) << bad;
    EXPECT_NE(map.error().message.find("expected CLOUD_PATH=LOCAL_PATH"), std::string::npos) << bad;
  }
}

TEST(SpecJob, MountsAreContainerPaths) {
  TempDir dir;
  auto job = load(dir, "command: x\ncode_mount: /opt/app\noutputs:\n  ckpt: {mount: /checkpoints}\n");
  ASSERT_TRUE(job.ok()) << job.error().str();
  EXPECT_EQ(job->code_mount, "/opt/app");
  EXPECT_EQ(job->outputs[0].mount, "/checkpoints");
  expect_error(load(dir, "command: x\ncode_mount: app\n"), 2, 13,
               "code_mount: \"app\" is not an absolute path inside the container without \".\", \"..\" or "
               "\"//\" (nor \"/\"); give where the platform mounts it, e.g. /data");
  expect_error(
      load(dir, "command: x\noutputs:\n  o: {mount: /dev/shm}\n"), 3, 14,
      "outputs.o.mount: \"/dev/shm\" lies in /dev, which the container's own file system holds; give "
      "another place");
  expect_error(load(dir, "command: x\ninputs:\n  d: {path: data, mount: /}\n"), 3, 26,
               "inputs.d.mount: \"/\" is not an absolute path inside the container without \".\", \"..\" or "
               "\"//\" (nor \"/\"); give where the platform mounts it, e.g. /data");
}

TEST(SpecJob, EnvironmentVariables) {
  TempDir dir;
  expect_error(load(dir, "command: x\nenvironment_variables:\n  1BAD: x\n"), 3, 3,
               "environment variable name \"1BAD\" must be letters, digits and \"_\", not "
               "starting with a digit");
  expect_error(load(dir, "command: x\nenvironment_variables:\n  EMPTY:\n"), 3, 3,
               "environment_variables.EMPTY: expected a value, got nothing (write \"\" for an "
               "empty string)");
  auto job = load(dir, "command: x\nenvironment_variables: {A: '', B: 1.50, C: true}\n");
  ASSERT_TRUE(job.ok()) << job.error().str();
  EXPECT_EQ(job->environment.at("A"), "");
  EXPECT_EQ(job->environment.at("B"), "1.50");
  EXPECT_EQ(job->environment.at("C"), "true");
}

}  // namespace
}  // namespace preflight::spec
