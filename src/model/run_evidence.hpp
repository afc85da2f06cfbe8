// What a dry run leaves behind for diagnosis: how the container ended, what it printed, what
// the harness reported, and the facts about the platform needed to name an environment
// difference (which mount a path is on, what the host has that the image lacks).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/events.hpp"
#include "model/job_kind.hpp"

namespace preflight::model {

struct OutputLine {
  enum class Stream { Stdout, Stderr };
  Stream stream = Stream::Stderr;
  bool setup = false;  // printed by the setup step, not the command
  std::string text;    // without the trailing newline
};

struct RunOutcome {
  int exit_code = 0;                // of the launcher (setup + command); 128+N for a signal
  int signal = 0;                   // terminating signal of the job's process, 0 if none
  bool oom_killed = false;          // the memory cgroup recorded an OOM kill
  bool timed_out = false;           // Preflight stopped it at the dry-run timeout
  bool disk_full = false;           // Preflight stopped it when its files outgrew the platform's disk
  std::uint64_t written_bytes = 0;  // what its files took then
  double timeout_s = 0;
  std::optional<int> setup_exit;   // set when the job had a setup step and it finished
  std::vector<OutputLine> output;  // the last lines of each stream, in arrival order
  harness::HarnessEvents events;
  std::vector<harness::Frame> stopped_at;  // a timed-out run's main process, outermost first
};

// A mount as the platform lays it out, seen from both sides.
struct MountFact {
  // PlatformFile: a file the platform writes for the job (SageMaker's hyperparameters.json).
  enum class Kind { Code, Input, Output, Writable, Scratch, Harness, PlatformFile };
  Kind kind = Kind::Code;
  std::string name;            // input/output name; empty otherwise (and for kept folders)
  std::string container_path;  // e.g. /job/code
  std::string host_path;       // e.g. /home/alice/mnist (empty for fresh tmpfs)
  bool read_only = true;
};

struct PlatformFacts {
  std::string platform;                 // profile name
  JobKind job_kind = JobKind::JobYaml;  // what the job was read from: hints use its words
  std::string image;                    // image reference as the job names it, e.g. "pytorch"
  std::string user;                     // "job (uid 1000)"
  unsigned uid = 1000;
  std::string home;                // in the container
  std::uint64_t shm_bytes = 0;     // size of /dev/shm
  std::uint64_t memory_bytes = 0;  // memory limit, 0: none
  std::uint64_t disk_bytes = 0;    // disk quota (limits.disk), 0: none
  std::string seccomp;             // the run's seccomp policy, e.g. "default"
  int gpus = 0;                    // per node, as the job asked
  int nodes = 1;
  std::string gpu_name;  // the profile's GPU model
  std::uint64_t gpu_memory_bytes = 0;
  double gpu_tflops = 0;  // peak FP32; 0: unknown
  // The CUDA context and cuBLAS's workspaces on that GPU, measured (policies/gpus.yaml
  // `framework`); 0: diagnosis's kFrameworkBytes.
  std::uint64_t gpu_framework_bytes = 0;
  std::vector<MountFact> mounts;
  std::set<std::string> environment;  // the names of the variables the job gets
  std::string code_container_dir;     // frames under it are the user's; reported relative
  std::string code_host_dir;
  // Whether the host's python3 can import a top-level module; unset: don't ask.
  std::function<bool(const std::string&)> host_has_module;
  // Whether a path exists on this machine (the laptop); unset: don't ask.
  std::function<bool(const std::string&)> host_path_exists;
  // The names in the folder `relative` below `host_dir`, a folder of this machine the job
  // writes (a mount's host_path), opened without following a link; unset: don't look.
  std::function<std::vector<std::string>(const std::string& host_dir, const std::string& relative)>
      host_folder_names;
};

}  // namespace preflight::model
