// The folders runs and checks keep their container's state in (docs/security.md "Crash-safe
// lifecycle"): each is held by the process that made it, through an flock on its ".lock"
// file, for as long as it lives; the kernel lets go when that process dies, even by SIGKILL.
// A folder whose lock is free belongs to nobody: its container, mounts and cgroup are reaped
// before anything else, and only then may it be pruned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::sandbox {

class RunFolder {
 public:
  // Makes the folder `dir` (its parent must exist or is made) and holds it.
  static Result<RunFolder> create(const std::filesystem::path& dir);
  // Makes a folder in `parent` named by `name()` and holds it; a name already taken (two runs
  // of one job started in the same second, their names' random part alike) is drawn again, up
  // to kNameDraws times.
  static Result<RunFolder> create_new(const std::filesystem::path& parent,
                                      const std::function<std::string()>& name);
  static constexpr int kNameDraws = 16;

  const std::filesystem::path& path() const { return dir_; }

 private:
  RunFolder(std::filesystem::path dir, UniqueFd lock) : dir_(std::move(dir)), lock_(std::move(lock)) {}
  // create(), with `error` the errno of the call that failed (EEXIST: the name is taken).
  static Result<RunFolder> make(const std::filesystem::path& dir, int& error);
  std::filesystem::path dir_;
  UniqueFd lock_;
};

// What is kept of a run once it is over: its container's layers (`scratch`) removed, and each
// folder of `written` (what the job wrote and is kept) disarmed, losing set-ID bits, devices,
// FIFOs and sockets (docs/security.md "job's files → the host's users"), or removed whole when
// too large to look through. Returns the folders removed whole.
std::vector<std::filesystem::path> tidy_run(const std::vector<std::filesystem::path>& scratch,
                                            const std::vector<std::filesystem::path>& written);

// What reap_abandoned found and did, for tests and the benchmark.
struct Reaped {
  std::size_t containers = 0;  // `runc delete --force` of a container left behind
  std::size_t mounts = 0;      // overlay and bind mounts unmounted
  std::size_t removed = 0;     // folders pruned
};

// For each folder under `parent` owned by this user and held by no process: deletes its
// container ("preflight-" + the folder's name), unmounts what is mounted in it and removes its
// cgroup; then removes all such folders but the newest `keep`. Folders held by a live process,
// and other users' folders, are never touched.
Reaped reap_abandoned(const std::filesystem::path& parent, std::size_t keep);

// Only the first step of reap_abandoned: deletes the container of each folder under `parent`
// held by no process; returns how many there were. A rootless Preflight's outer process does
// this (docs/rootless.md): the container of an inner process that died runs in that process's
// user namespace, which another namespace cannot signal and the user outside it can.
std::size_t stop_abandoned_containers(const std::filesystem::path& parent);

// What prune_runs removed.
struct RunsPruned {
  std::uint64_t bytes = 0;  // the blocks they took
  std::size_t outputs = 0;  // stopped runs whose outputs and kept folders went
  std::size_t folders = 0;  // whole run folders
};

// Frees at least `wanted` bytes, where it can, from the folders under `parent` that are this
// user's and no process holds, none still mounted: first the outputs and kept folders of runs
// Preflight stopped (RunLayout::stopped), largest first, the rest of their folders left;
// then whole folders, oldest first. Nothing when `wanted` is 0.
RunsPruned prune_runs(const std::filesystem::path& parent, std::uint64_t wanted);

}  // namespace preflight::sandbox
