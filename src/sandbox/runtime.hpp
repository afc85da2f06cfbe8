// The seam between Preflight and the OCI runtime that runs its containers, on the model of
// ninja's CommandRunner: the dry run and the image's Python are given a ContainerRuntime; the
// command line gives them runc (sandbox/container.hpp), the pipeline's unit tests a fake that
// plays back a job's output, harness events and exit without starting anything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/run_evidence.hpp"
#include "plan/run_plan.hpp"
#include "util/error.hpp"

namespace preflight::sandbox {

struct ContainerExit {
  int exit_code = 0;  // 128+N when killed by signal N, as a shell reports it
  int signal = 0;
  bool oom_killed = false;
  bool timed_out = false;
  int interrupted_by = 0;             // SIGINT/SIGTERM that stopped the run, 0 if none
  bool disk_full = false;             // stopped: its files outgrew the platform's disk (limits.disk)
  bool host_disk_low = false;         // stopped: the host's disk was running out (docs/security.md)
  std::uint64_t written_bytes = 0;    // what its writable places held at the last measure
  std::uint64_t host_free_bytes = 0;  // the run folder's disk's free space, then
  std::uint64_t peak_memory_bytes = 0;
  double seconds = 0;
  std::vector<std::string> unenforced;  // the platform's limits this run could not enforce, a sentence each
};

// Called for each complete line the job prints, as it prints it.
using LineSink = std::function<void(model::OutputLine::Stream, std::string_view)>;

// The longest line of output handed to a LineSink whole; the rest of a longer one (a progress
// bar redrawn with \r for hours) is dropped up to its newline, so that memory stays bounded.
inline constexpr std::size_t kMaxLineBytes = 1 << 20;

class ContainerRuntime {
 public:
  virtual ~ContainerRuntime() = default;
  // Runs `plan` over the read-only `image_rootfs` and waits for it to end, handing each line
  // it prints (at most `max_line_bytes`) to `on_line`. What the job wrote is in the plan's run
  // folder afterwards (model::RunLayout). An error when the container could not be run at
  // all; a job that fails, times out or is interrupted is a ContainerExit that says so.
  virtual Result<ContainerExit> run(const plan::RunPlan& plan, const std::filesystem::path& image_rootfs,
                                    const LineSink& on_line, std::size_t max_line_bytes = kMaxLineBytes) = 0;
  // Bad input when this runtime cannot run the platform's jobs as uid:gid (a pod that runs
  // as another user), asked before anything runs. A container starts as any user.
  virtual Status check_user(unsigned /*uid*/, unsigned /*gid*/) const { return Ok{}; }
};

}  // namespace preflight::sandbox
