// A platform profile (policies/platforms/NAME.yaml, docs/formats.md): how a shared platform
// runs a job — its user, environment, mounts, limits, GPUs, launcher and retry policy. Data,
// not code: organisations write their own.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "spec/seccomp_policy.hpp"
#include "util/error.hpp"
#include "util/units.hpp"

namespace preflight::spec {

struct PlatformUser {
  std::string name = "job";
  unsigned uid = 1000;
  unsigned gid = 1000;
  std::string home = "/home/job";
  bool sudo = false;
};

// Where the platform puts things inside the container. Templates use {{...}} variables
// (docs/formats.md): {{name}} in per-input/per-output paths, {{job.name}}, {{job.id}}, ...
struct MountLayout {
  std::string code = "/job/code";                // the uploaded code
  std::string input = "/job/inputs/{{name}}";    // each input, read-only
  std::string output = "/job/outputs/{{name}}";  // each output, writable
  std::string scratch;                           // empty: none
  std::string working_dir = "{{code}}";
  std::vector<std::string> writable = {"/tmp"};  // extra writable folders (fresh, empty)
  // The platform's own output folders, kept after the job like declared outputs
  // (SageMaker's /opt/ml/model, AzureML's {{code}}/outputs): fresh, writable, not named in
  // job.yaml; templates as in mount paths.
  std::vector<std::string> kept;
  // The job may write into its code folder (SageMaker, AzureML, Slurm): a copy-on-write
  // overlay over the user's folder. False: read-only.
  bool code_writable = false;
};

struct ResourceLimits {
  std::uint64_t memory_bytes = 0;  // 0: unlimited
  std::uint64_t shm_bytes = 64ull << 20;
  std::uint64_t disk_bytes = 0;  // what the job may write (its container's disk); 0: no quota
  int pids = 0;                  // 0: unlimited
  double cpus = 0;               // 0: unlimited
};

struct GpuModel {
  std::string name;  // "Tesla P100-PCIE-16GB"
  std::uint64_t memory_bytes = 0;
  double tflops = 0;  // peak FP32 throughput, for step-time estimates; 0: unknown
};

struct EnvTemplate {
  std::string name;  // may itself hold {{NAME}} for per-input/output entries
  std::string value;
  SourceLocation where;
};

// How the platform hands job.yaml's hyperparameters: to the job (SageMaker's script mode).
struct HyperparameterDelivery {
  bool arguments = false;                // appended to the command as --name value, by name
  std::vector<EnvTemplate> environment;  // one per hyperparameter: {{name}}, {{NAME}}, {{value}}
};

// A file the platform writes for the job before it starts (SageMaker's resourceconfig.json);
// read-only in the container.
struct PlatformFile {
  std::string path;     // in the container, absolute
  std::string content;  // a template; a path ending in .json must expand to valid JSON
  SourceLocation where;
};

struct PlatformProfile {
  std::string name;
  std::string description;
  std::filesystem::path file;  // where it was loaded from
  std::string default_image = "pytorch";
  std::string hostname;  // a template; empty: NAME-worker-0
  PlatformUser user;
  MountLayout mounts;
  // The platform's facts, never grants: a run keeps the sandbox's floor whatever they say
  // (docs/security.md "The sandbox floor"); where they are written, for the report's notes.
  bool network = false;
  SeccompPolicy seccomp;  // `seccomp: NAME` of policies/seccomp; "default" when not given
  SourceLocation network_at, seccomp_at;
  ResourceLimits limits;
  GpuModel gpu;
  std::vector<EnvTemplate> environment;         // exported to every job
  std::vector<EnvTemplate> input_environment;   // one per input, {{NAME}}/{{name}}/{{path}}
  std::vector<EnvTemplate> output_environment;  // one per output
  std::string input_config_json = "{}";  // what the platform records about each input: {{inputs.config.json}}
  HyperparameterDelivery hyperparameters;
  std::vector<PlatformFile> files;
  std::vector<std::string> launcher = {"/bin/sh", "-c"};  // how setup and command are run
  int retry_attempts = 1;
};

// The folder of shipped profiles (policies/platforms).
std::filesystem::path shipped_platforms_dir();

// Names of shipped profiles, sorted.
std::vector<std::string> list_platforms(const std::filesystem::path& dir);

// NAME (a shipped profile) or a path to a profile file. An unknown name is an error (exit 2)
// listing the shipped names with a did-you-mean.
Result<PlatformProfile> load_platform(const std::string& name_or_file, const std::filesystem::path& dir);

}  // namespace preflight::spec
