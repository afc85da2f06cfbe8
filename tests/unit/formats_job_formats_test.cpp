#include <gtest/gtest.h>

#include <algorithm>

#include "formats/job_formats.hpp"
#include "spec/job_spec.hpp"
#include "test_support.hpp"

namespace preflight::formats {
namespace {

using preflight::testing::TempDir;
namespace fs = std::filesystem;

// A PyTorchJob in the operator guide's form, with the cases a reader must map: args after
// command, $(VAR) from env, GPUs, a read-only claim, a writable one, a memory /dev/shm, a
// Worker, and fields the dry run does not use.
constexpr const char* kPyTorchJob = R"yaml(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: resnet
  namespace: research
spec:
  runPolicy: {backoffLimit: 3, activeDeadlineSeconds: 7200}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          nodeSelector: {gpu: a100}
          containers:
            - name: logger
              image: busybox
            - name: pytorch
              image: team/resnet:2
              command: [python, /opt/app/src/train.py]
              args: ["--data=/data/imagenet", "--lr=$(LR)", "--keep=$$(LR)", "--unknown=$(NOPE)"]
              env:
                - {name: LR, value: "0.1"}
                - name: TOKEN
                  valueFrom: {secretKeyRef: {name: s, key: t}}
              resources:
                limits: {nvidia.com/gpu: 4, memory: 64Gi, cpu: 8}
              volumeMounts:
                - {name: data, mountPath: /data, readOnly: true}
                - {name: ckpt, mountPath: /ckpt}
                - {name: dshm, mountPath: /dev/shm}
                - {name: config, mountPath: /etc/app}
          volumes:
            - name: data
              persistentVolumeClaim: {claimName: imagenet}
            - name: ckpt
              persistentVolumeClaim: {claimName: checkpoints}
            - name: dshm
              emptyDir: {medium: Memory}
            - name: config
              configMap: {name: app-config}
    Worker:
      replicas: 3
      template:
        spec:
          containers: [{name: pytorch, image: team/resnet:2, command: [python, /opt/app/src/train.py]}]
)yaml";

bool has_note(const spec::JobSpec& job, const std::string& text, int line) {
  return std::any_of(job.notes.begin(), job.notes.end(), [&](const spec::SpecNote& note) {
    return note.message.find(text) != std::string::npos && note.where.line == line;
  });
}

std::string notes_of(const spec::JobSpec& job) {
  std::string out;
  for (const auto& note : job.notes) out += note.where.str() + ": " + note.message + "\n";
  return out;
}

struct Fixture {
  TempDir dir;
  ReadOptions options;

  Fixture() {
    dir.write("code/src/train.py", "print('train')\n");
    dir.write("sample/imagenet/train/0.jpg", "x");
    options.code_dir = dir.path() / "code";
    auto map = spec::parse_path_map("pvc://imagenet=sample", dir.path());
    EXPECT_TRUE(map.ok());
    options.load.maps.push_back(*map);
  }
};

TEST(FormatsKind, RecognisesEachKindByItsContent) {
  TempDir dir;
  const ReadOptions none;
  const auto kind_of = [&](const std::string& name, const std::string& text) {
    return detect_kind(dir.write(name, text), none);
  };
  EXPECT_EQ(*kind_of("a.yaml", "command: python x.py\n"), JobKind::JobYaml);
  EXPECT_EQ(*kind_of("b.yaml", kPyTorchJob), JobKind::PyTorchJob);
  EXPECT_EQ(*kind_of("run.sh", "#!/bin/bash\npython x.py\n"), JobKind::SlurmBatch);
  EXPECT_EQ(*kind_of("run.txt", "# a job\n#SBATCH --gres=gpu:1\npython x.py\n"), JobKind::SlurmBatch);
  // A file that does not parse is job.yaml's to report.
  EXPECT_EQ(*kind_of("bad.yaml", "command: [\n"), JobKind::JobYaml);
  EXPECT_EQ(*detect_kind(dir.path() / "missing.yaml", none), JobKind::JobYaml);
  // Another Kubernetes kind is named, at its kind:.
  auto deployment = kind_of("d.yaml", "apiVersion: apps/v1\nkind: Deployment\n");
  ASSERT_FALSE(deployment.ok());
  EXPECT_EQ(deployment.error().exit_status(), 2);
  EXPECT_EQ(deployment.error().where.line, 2);
  EXPECT_EQ(deployment.error().where.column, 7);
  EXPECT_NE(deployment.error().message.find("apiVersion apps/v1 kind Deployment is not a job definition"),
            std::string::npos);
  // --as decides whatever the content.
  ReadOptions as;
  as.as = JobKind::SlurmBatch;
  EXPECT_EQ(*detect_kind(dir.path() / "a.yaml", as), JobKind::SlurmBatch);
  EXPECT_EQ(*kind_named("pytorchjob"), JobKind::PyTorchJob);
  auto unknown = kind_named("tfjob");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message,
            "--as tfjob: unknown kind of job file; one of job.yaml (Preflight's or AzureML's command job), "
            "pytorchjob (a Kubeflow PyTorchJob), trainjob (a Kubeflow Trainer TrainJob), vertex (a Vertex AI "
            "custom job), sagemaker (a SageMaker estimator's arguments), slurm (a Slurm batch script)");
}

TEST(FormatsPyTorchJob, MapsTheMastersTrainingContainer) {
  Fixture f;
  const fs::path file = f.dir.write("job/pytorchjob.yaml", kPyTorchJob);
  auto job = load_any_job(file, f.options);
  ASSERT_TRUE(job.ok()) << job.error().str();
  EXPECT_EQ(job->file, file);
  EXPECT_EQ(job->name, "resnet");
  EXPECT_EQ(job->platform, "kubeflow");
  EXPECT_EQ(job->image, "team/resnet:2");
  EXPECT_EQ(job->image_where.line, 18);
  EXPECT_EQ(job->code_dir, f.dir.path() / "code");
  // The script is src/train.py of the code folder, so the code is at /opt/app.
  EXPECT_EQ(job->code_mount, "/opt/app");
  // $(LR) is the variable's value; $$ is a $; an undefined $(NOPE) stays as written.
  EXPECT_EQ(job->command,
            "python /opt/app/src/train.py --data=/data/imagenet --lr=0.1 '--keep=$(LR)' '--unknown=$(NOPE)'");
  EXPECT_EQ(job->command_where.line, 19);
  EXPECT_EQ(job->environment.at("LR"), "0.1");
  EXPECT_EQ(job->environment.count("TOKEN"), 0u);
  EXPECT_EQ(job->gpus, 4);
  EXPECT_EQ(job->nodes, 4);                // Master 1 + Worker 3
  EXPECT_EQ(job->shm_bytes, 64ull << 30);  // a memory emptyDir is as large as the memory limit
  ASSERT_EQ(job->inputs.size(), 1u);
  EXPECT_EQ(job->inputs[0].name, "data");
  EXPECT_EQ(job->inputs[0].cloud, "pvc://imagenet");
  EXPECT_EQ(job->inputs[0].path, f.dir.path() / "sample");
  EXPECT_EQ(job->inputs[0].mount, "/data");
  EXPECT_EQ(job->inputs[0].where.line, 28);  // the volume mount
  ASSERT_EQ(job->outputs.size(), 1u);
  EXPECT_EQ(job->outputs[0].name, "ckpt");
  EXPECT_EQ(job->outputs[0].mount, "/ckpt");
  EXPECT_EQ(job->time_limit, std::chrono::seconds(7200));  // runPolicy.activeDeadlineSeconds
  EXPECT_EQ(job->time_limit_where.line, 7);

  // Everything else is a note at its place.
  const std::string notes = notes_of(*job);
  EXPECT_TRUE(has_note(*job, "metadata.namespace: not mapped", 5)) << notes;
  EXPECT_TRUE(has_note(*job, "spec.runPolicy.backoffLimit: not mapped", 7)) << notes;
  EXPECT_TRUE(has_note(*job, "nodeSelector: not mapped: scheduling", 13)) << notes;
  EXPECT_TRUE(has_note(*job, "containers[0]: not mapped: only the training container", 15)) << notes;
  EXPECT_TRUE(has_note(*job, "env[1].valueFrom: not mapped", 24)) << notes;
  EXPECT_TRUE(has_note(*job, "limits.memory: not mapped", 26)) << notes;
  EXPECT_TRUE(has_note(*job, "limits.cpu: not mapped", 26)) << notes;
  EXPECT_TRUE(has_note(*job, "volumes[1]: not mapped: mounted writable", 29)) << notes;
  EXPECT_TRUE(has_note(*job, "volumes[3]: not mapped: its files are not known here", 31)) << notes;
  EXPECT_TRUE(has_note(*job, "Worker.template: not mapped", 43)) << notes;
  EXPECT_EQ(job->notes.size(), 10u) << notes;
}

TEST(FormatsPyTorchJob, ConvertedItLoadsToTheSameJob) {
  Fixture f;
  const fs::path file = f.dir.write("job/pytorchjob.yaml", kPyTorchJob);
  auto read = read_job_file(file, f.options);
  ASSERT_TRUE(read.ok()) << read.error().str();
  EXPECT_EQ(read->kind, JobKind::PyTorchJob);
  ASSERT_TRUE(read->translation.has_value());
  const std::string text = read->translation->text();
  EXPECT_NE(
      text.find("# pytorchjob.yaml:18 spec.pytorchReplicaSpecs.Master.template.spec.containers[1].image\n"
                "image: \"team/resnet:2\"\n"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("paths:\n  # pytorchjob.yaml --map pvc://imagenet\n  \"pvc://imagenet\": \"../sample\"\n"),
      std::string::npos)
      << text;
  // Saved beside the source in the repository that holds the code and the sample (a git work
  // tree, whose files a job may name), the job.yaml loads (without --map) to the same job.
  f.dir.write(".git/HEAD", "ref: refs/heads/main\n");
  const fs::path converted = f.dir.write("job/converted.yaml", text);
  auto direct = load_any_job(file, f.options);
  auto loaded = spec::load_job(converted);
  ASSERT_TRUE(direct.ok() && loaded.ok()) << (loaded.ok() ? direct.error().str() : loaded.error().str());
  EXPECT_EQ(loaded->command, direct->command);
  EXPECT_EQ(loaded->code_dir, direct->code_dir);
  EXPECT_EQ(loaded->code_mount, direct->code_mount);
  EXPECT_EQ(loaded->inputs[0].path, direct->inputs[0].path);
  EXPECT_EQ(loaded->inputs[0].mount, direct->inputs[0].mount);
  EXPECT_EQ(loaded->environment, direct->environment);
  EXPECT_EQ(loaded->gpus, direct->gpus);
  EXPECT_EQ(loaded->nodes, direct->nodes);
  EXPECT_EQ(loaded->shm_bytes, direct->shm_bytes);
}

TEST(FormatsPyTorchJob, ErrorsPointIntoTheFileAsWritten) {
  Fixture f;
  // The claim has no --map: the error is at the volume mount, with the --map to add.
  ReadOptions unmapped = f.options;
  unmapped.load.maps.clear();
  const fs::path file = f.dir.write("job/pytorchjob.yaml", kPyTorchJob);
  auto job = load_any_job(file, unmapped);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().exit_status(), 2);
  EXPECT_EQ(job.error().where.file, file);
  EXPECT_EQ(job.error().where.line, 28);
  EXPECT_NE(job.error().message.find("add --map pvc://imagenet=./LOCAL"), std::string::npos)
      << job.error().str();
  EXPECT_NE(job.error().message.find("(preflight convert " + file.string() + " shows the job.yaml"),
            std::string::npos);

  // Malformed YAML: exit 2 at its line and column.
  ReadOptions as_pytorchjob;
  as_pytorchjob.as = JobKind::PyTorchJob;
  auto broken =
      load_any_job(f.dir.write("job/broken.yaml", "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nspec: [\n"),
                   as_pytorchjob);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().exit_status(), 2);
  EXPECT_EQ(broken.error().where.line, 4);

  // No command: the image's ENTRYPOINT would run, which Preflight cannot read here.
  auto no_command = load_any_job(f.dir.write("job/nocmd.yaml", R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
spec:
  pytorchReplicaSpecs:
    Worker:
      template:
        spec:
          containers:
            - name: pytorch
              image: x
)"),
                                 f.options);
  ASSERT_FALSE(no_command.ok());
  EXPECT_EQ(no_command.error().where.line, 9);
  EXPECT_NE(no_command.error().message.find("gives no command:"), std::string::npos);

  // A value job.yaml refuses is reported where the PyTorchJob has it.
  std::string bad_env = kPyTorchJob;
  bad_env.replace(bad_env.find("{name: LR,"), 10, "{name: L-R,");
  auto refused = load_any_job(f.dir.write("job/badenv.yaml", bad_env), f.options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().where.line, 22) << refused.error().str();
  EXPECT_NE(refused.error().message.find("environment variable name \"L-R\""), std::string::npos);

  // A cluster folder maps only for a Slurm script.
  ReadOptions folder = f.options;
  folder.load.maps.push_back(*spec::parse_path_map("/datasets=sample", f.dir.path()));
  auto wrong = load_any_job(file, folder);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("a folder of the cluster maps only for a Slurm script"),
            std::string::npos);
}

TEST(FormatsTrainJob, MapsTheTrainerAndTheInitializersStorage) {
  TempDir dir;
  dir.write("sample/llm/a.jsonl", "{}\n");
  const fs::path file = dir.write("job/trainjob.yaml", R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: llama-sft
spec:
  runtimeRef: {name: torch-distributed}
  initializer:
    dataset: {storageUri: "hf://org/llm", env: [{name: HF_TOKEN, value: x}]}
  trainer:
    command: [python, -m, sft.main]
    args: [--data, /workspace/dataset]
    numNodes: 2
    numProcPerNode: 4
    resourcesPerNode: {limits: {nvidia.com/gpu: 4, memory: 128Gi}}
)");
  ReadOptions options;
  options.code_dir = dir.path() / "job";
  options.load.maps.push_back(*spec::parse_path_map("hf://org=sample", dir.path()));
  auto kind = detect_kind(file, {});
  ASSERT_TRUE(kind.ok());
  EXPECT_EQ(*kind, JobKind::TrainJob);
  auto job = load_any_job(file, options);
  ASSERT_TRUE(job.ok()) << job.error().str();
  EXPECT_EQ(job->name, "llama-sft");
  EXPECT_EQ(job->platform, "kubeflow");
  EXPECT_TRUE(job->image.empty());  // the runtime's image: the profile's default stands in
  EXPECT_EQ(job->command, "python -m sft.main --data /workspace/dataset");
  EXPECT_EQ(job->gpus, 4);
  EXPECT_EQ(job->nodes, 2);
  ASSERT_EQ(job->inputs.size(), 1u);
  EXPECT_EQ(job->inputs[0].mount, "/workspace/dataset");
  EXPECT_EQ(job->inputs[0].path, dir.path() / "sample" / "llm");
  const std::string notes = notes_of(*job);
  EXPECT_TRUE(has_note(*job, "spec.runtimeRef: not mapped: the runtime is the cluster's", 6)) << notes;
  EXPECT_TRUE(has_note(*job, "spec.initializer.dataset.env: not mapped", 8)) << notes;
  EXPECT_TRUE(has_note(*job, "spec.trainer.image: not mapped", 2)) << notes;
  EXPECT_TRUE(has_note(*job, "numProcPerNode: not mapped", 13)) << notes;
  EXPECT_TRUE(has_note(*job, "resourcesPerNode (memory, cpu): not mapped", 14)) << notes;
}

TEST(FormatsVertex, MapsTheFirstPoolsFirstReplica) {
  TempDir dir;
  dir.write("code/trainer/__init__.py", "");
  dir.write("sample/imagenet/train/0.jpg", "x");
  dir.write("sample/data/shared.txt", "x");
  const fs::path file = dir.write("job/custom.yaml", R"(displayName: Image classifier v2
jobSpec:
  scheduling: {timeout: 9000s, restartJobOnWorkerRestart: true}
  workerPoolSpecs:
    - machineSpec: {machineType: a2-highgpu-2g, acceleratorType: NVIDIA_TESLA_A100, acceleratorCount: 2}
      replicaCount: 1
      diskSpec: {bootDiskSizeGb: 200}
      nfsMounts: [{server: 10.0.0.2, path: /exports/data, mountPoint: shared}]
      pythonPackageSpec:
        executorImageUri: us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-1.py310:latest
        packageUris: [gs://pkgs/trainer-0.1.tar.gz]
        pythonModule: trainer.task
        args: [--data=/gcs/vision/imagenet, --labels=/gcs/vision/imagenet/labels.txt, --cache=/gcs/scratch/c,
               --out=/gcs/models/run/extra, gs://vision/raw]
        env: [{name: MODE, value: fast}]
    - {}
    - machineSpec: {machineType: n1-highmem-8}
      replicaCount: 2
      containerSpec: {imageUri: gcr.io/p/reduction-server}
  baseOutputDirectory: {outputUriPrefix: gs://models/run/}
)");
  ReadOptions options;
  options.code_dir = dir.path() / "code";
  options.load.maps.push_back(*spec::parse_path_map("gs://vision=sample", dir.path()));
  options.load.maps.push_back(*spec::parse_path_map("nfs://10.0.0.2/exports=sample", dir.path()));
  auto kind = detect_kind(file, {});
  ASSERT_TRUE(kind.ok());
  EXPECT_EQ(*kind, JobKind::VertexCustomJob);
  auto job = load_any_job(file, options);
  ASSERT_TRUE(job.ok()) << job.error().str();
  EXPECT_EQ(job->name, "Image-classifier-v2");
  EXPECT_EQ(job->platform, "vertex");
  EXPECT_EQ(job->image, "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-1.py310:latest");
  EXPECT_EQ(job->command,
            "python -m trainer.task --data=/gcs/vision/imagenet --labels=/gcs/vision/imagenet/labels.txt "
            "--cache=/gcs/scratch/c --out=/gcs/models/run/extra gs://vision/raw");
  EXPECT_EQ(job->command_where.line, 12);  // pythonModule
  EXPECT_EQ(job->gpus, 2);
  EXPECT_EQ(job->nodes, 3);  // the pools' replicas; the empty pool keeps its place and runs nothing
  EXPECT_EQ(job->environment.at("MODE"), "fast");
  EXPECT_EQ(job->environment.at("AIP_MODEL_DIR"), "gs://models/run/model/");
  // /gcs/vision/imagenet has a local copy (labels.txt inside it is not a second input); the
  // NFS share is at /mnt/nfs/<mountPoint>.
  ASSERT_EQ(job->inputs.size(), 2u);
  EXPECT_EQ(job->inputs[0].mount, "/gcs/vision/imagenet");
  EXPECT_EQ(job->inputs[0].path, dir.path() / "sample" / "imagenet");
  EXPECT_EQ(job->inputs[1].mount, "/mnt/nfs/shared");
  EXPECT_EQ(job->inputs[1].path, dir.path() / "sample" / "data");
  // The base output directory, and an unmapped /gcs/ path (an empty writable folder, with a
  // note giving the --map); /gcs/models/run/extra lies in the base output.
  ASSERT_EQ(job->outputs.size(), 2u);
  EXPECT_EQ(job->outputs[0].mount, "/gcs/models/run");
  EXPECT_EQ(job->outputs[1].mount, "/gcs/scratch/c");
  const std::string notes = notes_of(*job);
  EXPECT_TRUE(has_note(*job, "/gcs/scratch/c: not mapped: no local copy", 12)) << notes;
  EXPECT_TRUE(has_note(*job, "add --map gs://scratch/c=./LOCAL", 12)) << notes;
  EXPECT_EQ(job->time_limit, std::chrono::seconds(9000));
  EXPECT_EQ(job->time_limit_where.line, 3);
  EXPECT_TRUE(has_note(*job, "jobSpec.scheduling.restartJobOnWorkerRestart: not mapped", 3)) << notes;
  EXPECT_TRUE(has_note(*job, "machineType: not mapped", 5)) << notes;
  EXPECT_TRUE(has_note(*job, "diskSpec: not mapped", 7)) << notes;
  EXPECT_TRUE(has_note(*job, "packageUris: not mapped: the package Vertex installs is the code folder", 11))
      << notes;
  EXPECT_TRUE(
      has_note(*job, "workerPoolSpecs[2]: not mapped: the dry run runs the first pool's first replica", 17))
      << notes;
}

TEST(FormatsVertex, ErrorsPointIntoTheConfig) {
  TempDir dir;
  ReadOptions options;
  options.code_dir = dir.path();
  auto no_command =
      load_any_job(dir.write("a.yaml", "workerPoolSpecs:\n  containerSpec:\n    imageUri: x\n"), options);
  ASSERT_FALSE(no_command.ok());
  EXPECT_EQ(no_command.error().where.line, 3);
  EXPECT_NE(no_command.error().message.find("gives no command:"), std::string::npos);
  auto bad_count = load_any_job(
      dir.write("b.yaml",
                "workerPoolSpecs:\n  machineSpec: {acceleratorCount: two}\n  containerSpec: {imageUri: x, "
                "command: [python, t.py]}\n"),
      options);
  ASSERT_FALSE(bad_count.ok());
  EXPECT_EQ(bad_count.error().where.line, 2);
  EXPECT_NE(bad_count.error().message.find("expected an integer, got \"two\""), std::string::npos);
  auto bad_output = load_any_job(dir.write("c.yaml",
                                           "workerPoolSpecs: {containerSpec: {imageUri: x, command: [t]}}\n"
                                           "baseOutputDirectory: {outputUriPrefix: /tmp/out}\n"),
                                 options);
  ASSERT_FALSE(bad_output.ok());
  EXPECT_EQ(bad_output.error().where.line, 2);
  EXPECT_NE(bad_output.error().message.find("expected a Cloud Storage URI"), std::string::npos);
  auto bad_timeout = load_any_job(dir.write("d.yaml",
                                            "workerPoolSpecs: {containerSpec: {imageUri: x, command: [t]}}\n"
                                            "scheduling: {timeout: 2h}\n"),
                                  options);
  ASSERT_FALSE(bad_timeout.ok());
  EXPECT_EQ(bad_timeout.error().str(),
            (dir.path() / "d.yaml").string() +
                ":2:23: scheduling.timeout: expected a duration in seconds such as "
                "\"7200s\", got \"2h\"");
  // Without scheduling.timeout, Vertex's default: 7 days.
  auto defaulted = load_any_job(
      dir.write("e.yaml", "workerPoolSpecs: {containerSpec: {imageUri: x, command: [t]}}\n"), options);
  ASSERT_TRUE(defaulted.ok()) << defaulted.error().str();
  EXPECT_EQ(defaulted->time_limit, std::chrono::hours(24 * 7));
}

TEST(FormatsSageMaker, ReadsTheEstimatorsLiteralArgumentsFromItsPython) {
  TempDir dir;
  dir.write("job/src/train.py", "print('x')\n");
  dir.write("sample/train/a.csv", "1\n");
  dir.write("sample/val/a.csv", "1\n");
  const fs::path file = dir.write("job/launch.py", R"py(import sagemaker
from sagemaker.inputs import TrainingInput
from sagemaker.pytorch import PyTorch  # PyTorch(entry_point="not this one")

print("PyTorch(entry_point='nor this')")
bucket = "team"
estimator = sagemaker.pytorch.PyTorch(
    entry_point='train.py',  # the script
    source_dir="src",
    role=role,
    base_job_name="cifar " "resnet",
    instance_type="ml.g5.12xlarge",
    instance_count=2,
    image_uri=image,
    hyperparameters={"epochs": 10, "lr": 1e-3, "arch": "resnet18", "amp": True, "seed": seed},
    environment={"NCCL_DEBUG": "INFO"},
    output_path=f"s3://{bucket}/out",
    max_run=2 * 24 * 60 * 60,
)
estimator.fit(
    {"train": "s3://team/cifar/train", "val": TrainingInput("s3://team/cifar/val")},
    wait=False,
)
)py");
  ReadOptions options;
  options.load.maps.push_back(*spec::parse_path_map("s3://team/cifar=sample", dir.path()));
  auto kind = detect_kind(file, {});
  ASSERT_TRUE(kind.ok());
  EXPECT_EQ(*kind, JobKind::SageMakerEstimator);
  auto job = load_any_job(file, options);
  ASSERT_TRUE(job.ok()) << job.error().str();
  EXPECT_EQ(job->platform, "sagemaker");
  EXPECT_EQ(job->name, "cifar-resnet");  // adjacent literals join
  EXPECT_TRUE(job->image.empty());       // no image_uri: the profile's default image
  EXPECT_EQ(job->code_dir, dir.path() / "job" / "src");
  EXPECT_EQ(job->command, "python train.py");
  EXPECT_EQ(job->command_where.line, 8);
  EXPECT_EQ(job->command_where.column, 17);
  EXPECT_EQ(job->gpus, 4);
  EXPECT_EQ(job->nodes, 2);
  EXPECT_EQ(job->environment.at("NCCL_DEBUG"), "INFO");
  ASSERT_EQ(job->hyperparameters.size(), 4u);
  EXPECT_EQ(job->hyperparameters[0].name, "epochs");
  EXPECT_TRUE(job->hyperparameters[0].typed);
  EXPECT_EQ(job->hyperparameters[1].value, "1e-3");
  EXPECT_EQ(job->hyperparameters[2].value, "resnet18");
  EXPECT_FALSE(job->hyperparameters[2].typed);
  EXPECT_EQ(job->hyperparameters[3].value, "true");
  // Only the literal channel maps; TrainingInput(...) is a call, named in a note.
  ASSERT_EQ(job->inputs.size(), 1u);
  EXPECT_EQ(job->inputs[0].name, "train");
  EXPECT_EQ(job->inputs[0].path, dir.path() / "sample" / "train");
  EXPECT_EQ(job->time_limit, std::chrono::hours(48));  // max_run, a product of literals
  EXPECT_EQ(job->time_limit_where.line, 18);
  const std::string notes = notes_of(*job);
  EXPECT_TRUE(has_note(*job, "the estimator's role: not mapped: the AWS account's", 10)) << notes;
  EXPECT_TRUE(has_note(*job, "image_uri=image: not mapped: not a literal value", 14)) << notes;
  EXPECT_TRUE(has_note(*job, "hyperparameter seed: not mapped", 15)) << notes;
  EXPECT_TRUE(has_note(*job, "output_path: not mapped: the AWS account's", 17)) << notes;
  EXPECT_TRUE(has_note(*job, "fit channel val: not mapped", 21)) << notes;
}

TEST(FormatsSageMaker, ReadsTheArgumentsFromAFileOfThem) {
  TempDir dir;
  dir.write("job/fit.py", "print('x')\n");
  const fs::path file =
      dir.write("job/estimator.json", R"({"entry_point": "fit.py", "image_uri": "team/fit:3",
 "instance_type": "ml.dl1.24xlarge", "hyperparameters": {"epochs": 2}, "inputs": "file://./"})");
  auto job = load_any_job(file, {});
  ASSERT_TRUE(job.ok()) << job.error().str();
  EXPECT_EQ(job->image, "team/fit:3");
  EXPECT_EQ(job->code_dir, dir.path() / "job");  // no source_dir: the entry point's folder
  EXPECT_EQ(job->gpus, 0);                       // an instance type Preflight does not know
  EXPECT_TRUE(has_note(*job, "instance_type: not mapped: an instance type Preflight does not know", 2))
      << notes_of(*job);
  ASSERT_EQ(job->inputs.size(), 1u);  // local mode's file:// channel is a local path
  EXPECT_EQ(job->inputs[0].path, dir.path() / "job");
  EXPECT_EQ(job->time_limit, std::chrono::hours(24));  // no max_run: SageMaker's default, a day
  auto computed = load_any_job(dir.write("job/m.yaml", "entry_point: fit.py\nmax_run: \"${HOURS}\"\n"), {});
  ASSERT_TRUE(computed.ok()) << computed.error().str();
  EXPECT_FALSE(computed->time_limit.has_value());  // max_run that is not seconds: a note, no default
  EXPECT_TRUE(has_note(*computed, "max_run: not mapped: not a whole number of seconds", 2))
      << notes_of(*computed);

  auto no_entry = load_any_job(dir.write("job/e.yaml", "entry_point: {a: 1}\n"), {});
  ASSERT_FALSE(no_entry.ok());
  EXPECT_EQ(no_entry.error().where.line, 1);
  EXPECT_NE(no_entry.error().message.find("needs entry_point, the script it runs"), std::string::npos);
  auto no_call = load_any_job(dir.write("job/other.py", "import torch\nprint(1)\n"), {});
  ASSERT_FALSE(no_call.ok());
  EXPECT_EQ(no_call.error().exit_status(), 2);
  EXPECT_NE(no_call.error().message.find("no SageMaker estimator call"), std::string::npos);
}

TEST(FormatsSlurm, MapsDirectivesAndRunsTheScriptAsOneTask) {
  TempDir dir;
  dir.write("sample/x.csv", "1\n");
  const fs::path file = dir.write("job/train.sbatch", R"(#!/bin/bash
#SBATCH --job-name=lm train
#SBATCH -N 2
#SBATCH --gres=gpu:a100:4,shard:1
#SBATCH --array=3-9%2 # a comment
#SBATCH --chdir=/scratch/me/lm
#SBATCH --cpus-per-task 6
#SBATCH --frobnicate
module load cuda/12
srun -n 8 --label --cpu-bind=cores python train.py --data /datasets/lm \
    --steps 10
echo done
#SBATCH --time=1:00:00
)");
  ReadOptions options;
  options.code_dir = dir.path() / "job";
  options.load.maps.push_back(*spec::parse_path_map("/datasets/lm=sample", dir.path()));
  auto job = load_any_job(file, options);
  ASSERT_TRUE(job.ok()) << job.error().str();
  EXPECT_EQ(job->name, "lm");  // "lm train": sbatch's name ends at the space; the word after is not an option
  EXPECT_EQ(job->platform, "slurm");
  EXPECT_EQ(job->nodes, 2);
  EXPECT_EQ(job->gpus, 4);
  EXPECT_EQ(job->code_mount, "/scratch/me/lm");
  EXPECT_EQ(job->environment.at("SLURM_ARRAY_TASK_ID"), "3");
  EXPECT_EQ(job->environment.at("SLURM_CPUS_PER_TASK"), "6");
  // srun and its options are gone; the module line is a comment; the rest is as written.
  EXPECT_NE(
      job->command.find(
          "\n# module load cuda/12\npython train.py --data /datasets/lm \\\n    --steps 10\necho done\n"),
      std::string::npos)
      << job->command;
  ASSERT_EQ(job->inputs.size(), 1u);
  EXPECT_EQ(job->inputs[0].mount, "/datasets/lm");
  EXPECT_EQ(job->inputs[0].path, dir.path() / "sample");
  const std::string notes = notes_of(*job);
  EXPECT_TRUE(has_note(*job, "#SBATCH train: not mapped", 2)) << notes;
  EXPECT_TRUE(has_note(*job, "#SBATCH --frobnicate: not mapped: not an sbatch option", 8)) << notes;
  EXPECT_TRUE(has_note(*job, "module load cuda/12: not mapped", 9)) << notes;
  EXPECT_TRUE(has_note(*job, "srun: not mapped", 10)) << notes;
  EXPECT_TRUE(has_note(*job, "#SBATCH after the first command: not mapped", 13)) << notes;
}

TEST(FormatsSlurm, TheTimeLimitInEachFormSbatchReads) {
  TempDir dir;
  ReadOptions options;
  options.code_dir = dir.path();
  const std::pair<const char*, std::optional<std::chrono::seconds>> cases[] = {
      {"30", std::chrono::minutes(30)},
      {"1:30", std::chrono::seconds(90)},
      {"2:00:00", std::chrono::hours(2)},
      {"2-12", std::chrono::hours(60)},
      {"1-0:30", std::chrono::minutes(24 * 60 + 30)},
      {"1-2:3:4", std::chrono::seconds(93784)},
      {"UNLIMITED", std::nullopt},
      {"0", std::nullopt},
  };
  for (const auto& [written, limit] : cases) {
    auto job = load_any_job(
        dir.write("t.sbatch", std::string("#!/bin/bash\n#SBATCH -t ") + written + "\nx\n"), options);
    ASSERT_TRUE(job.ok()) << written << ": " << job.error().str();
    EXPECT_EQ(job->time_limit, limit) << written;
    EXPECT_EQ(job->time_limit_where.line, limit ? 2 : 0) << written;
  }
  auto bad = load_any_job(dir.write("t.sbatch", "#!/bin/bash\n#SBATCH --time=2h\nx\n"), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().where.line, 2);
  EXPECT_NE(bad.error().message.find("#SBATCH --time=2h is not a time sbatch reads"), std::string::npos)
      << bad.error().message;
}

TEST(FormatsSlurm, ErrorsPointIntoTheScript) {
  TempDir dir;
  const fs::path file = dir.write("job/run.sh", "#!/bin/bash\n#SBATCH --nodes=two\npython x.py\n");
  ReadOptions options;
  options.code_dir = dir.path() / "job";
  auto job = load_any_job(file, options);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().exit_status(), 2);
  EXPECT_EQ(job.error().where.file, file);
  EXPECT_EQ(job.error().where.line, 2);
  EXPECT_NE(job.error().message.find("expected an integer, got \"two\""), std::string::npos)
      << job.error().str();
  auto empty = load_any_job(dir.write("job/empty.sh", "#!/bin/bash\n#SBATCH --gres\n"), options);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().where.line, 2);
  EXPECT_EQ(empty.error().where.column, 9);
  EXPECT_EQ(empty.error().message, "#SBATCH --gres needs a value");
  // A job.yaml names its code itself.
  auto yaml = load_any_job(dir.write("job/job.yaml", "command: x\n"), options);
  ASSERT_FALSE(yaml.ok());
  EXPECT_NE(yaml.error().message.find("--code is for job definitions that do not name their code"),
            std::string::npos);
}

}  // namespace
}  // namespace preflight::formats
