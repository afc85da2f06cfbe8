// The RunPlan: everything the sandbox needs to run a job as the platform would — process,
// user, environment, mounts, limits — derived purely from the job spec, the platform profile
// and the image's facts. Building it starts nothing and touches no file, so it is tested
// without a container.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "image/image_store.hpp"
#include "model/run_evidence.hpp"
#include "model/run_layout.hpp"
#include "plan/sandbox_floor.hpp"
#include "spec/job_spec.hpp"
#include "spec/platform_profile.hpp"
#include "util/error.hpp"

namespace preflight::plan {

// Fixed places of Preflight's own parts inside the container.
inline constexpr const char* kEmulatorMount = "/opt/preflight/emulator";
inline constexpr const char* kRunMount = "/opt/preflight/run";
inline constexpr const char* kEventsFile = "/opt/preflight/run/events.jsonl";

// A folder of the host bound into the container: the code, an input, an output, Preflight's own.
struct MountPlan {
  model::MountFact::Kind kind = model::MountFact::Kind::Code;
  std::string name;              // input/output name
  std::string destination;       // in the container
  std::filesystem::path source;  // on the host
  bool read_only = true;
  // Non-empty: copy-on-write. An overlay whose lower layer is `source` (never written) and
  // whose own folders are in this folder of the run; its merged view is what is bound.
  std::filesystem::path overlay_dir;

  model::OverlayLayout overlay() const { return {overlay_dir}; }
  std::filesystem::path bound_source() const { return overlay_dir.empty() ? source : overlay().merged(); }
};

// A folder Preflight creates in the run folder before the container starts, owned by the
// job's user so that the platform's writable places are writable to it.
struct PreparedDir {
  std::filesystem::path path;  // on the host
  unsigned uid = 0;
  unsigned gid = 0;
};

// A file the platform writes for the job (profile files:), written into the run folder before
// the container starts and bound read-only at its place.
struct PlannedFile {
  std::filesystem::path path;  // on the host
  std::string content;
};

// A folder the platform gives the job's user in the container's own (writable) root: its
// home, the profile's writable folders, scratch. Writes land in the run's overlay layer.
struct UserDir {
  std::string path;           // in the container
  bool own_existing = false;  // chown it to the user even when the image has it (the home)
};

struct ProcessPlan {
  std::vector<std::string> args;  // the launcher: setup, then command
  std::vector<std::string> env;   // "KEY=VALUE", complete: the host's never leaks in
  std::string cwd;
  unsigned uid = 0;
  unsigned gid = 0;
};

struct RunPlan {
  std::string job_name;
  std::string job_id;
  std::string container_id;  // runc's name for the container
  std::string platform;
  std::string hostname;
  std::filesystem::path run_dir;  // this run's own folder on the host: all it writes is here
  std::string setup;              // after substitution; empty: none
  std::string command;            // after substitution
  ProcessPlan process;
  std::vector<MountPlan> mounts;
  std::vector<PreparedDir> prepare;
  std::vector<PlannedFile> files;
  std::vector<UserDir> user_dirs;
  spec::ResourceLimits limits;
  bool network = false;         // the host's: only when the user passed --network
  spec::SeccompPolicy seccomp;  // the floor or --seccomp's; no rules: no filter (a plan made in a test)
  std::vector<std::string> seccomp_abis;  // the ABIs besides the host's own its filter answers
  int steps = 2;
  int batch = 2;  // PREFLIGHT_BATCH: a DataLoader's batch above it is sampled to it; 0: never
  std::chrono::milliseconds timeout{600000};
  bool harness = true;               // the harness is injected: on timeout it is asked for its stacks first
  std::filesystem::path stdin_file;  // the process's standard input (one of `files`); empty: none
  // The image's sealed folders, which the sandbox may bind into the container's root in place
  // of its overlay (sandbox/sealed_binds.hpp); none: the overlay throughout.
  std::vector<image::SealedFolder> image_sealed;
  model::PlatformFacts facts;      // for diagnosis (functions left unset here)
  std::vector<std::string> notes;  // what the platform does with the job that the user should know

  model::RunLayout layout() const { return model::RunLayout(run_dir); }
};

// What the caller decides about this particular run (names, folders); keeps planning pure.
struct PlanContext {
  std::filesystem::path run_dir;
  std::filesystem::path emulator_dir;                         // the repository's emulator/ folder
  std::string job_id;                                         // unique per run
  std::optional<int> steps_override;                          // --steps
  std::optional<std::chrono::milliseconds> timeout_override;  // --timeout
  bool harness = true;  // false (--no-harness): the job exactly as the platform runs it
  // Lines of the job's Python files that static predictions are about, relative to the code
  // folder: the harness says which of them run (docs/harness.md "Watched lines").
  std::vector<SourceLocation> watched;
  // The sandbox: the floor, or what the user lowered it to; never the profile's (plan/sandbox_floor.hpp).
  SandboxFloor sandbox;
  std::optional<int> batch_override;  // 0: the job's own batch size (a re-run whose failure sampling made)
  std::vector<image::SealedFolder> image_sealed;  // image::UnpackedImage::sealed
};

Result<RunPlan> make_plan(const spec::JobSpec& job, const spec::PlatformProfile& profile,
                          const image::ImageConfig& image, const PlanContext& context);

}  // namespace preflight::plan
