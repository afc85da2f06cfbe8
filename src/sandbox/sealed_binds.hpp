// The image's sealed folders (image/sealed_folders.hpp) bound into the container's root in place
// of its overlay. A job's imports then find their files in the image's own folders, without the
// overlay's first lookup of each path (docs/benchmarks.md), while a write there meets the same
// EACCES as in the overlay and on the platform (docs/security.md "Sealed folders").
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/run_plan.hpp"

namespace preflight::sandbox {

// A sealed folder is bound only when a job may look up many paths in it: each bind is a mount
// more for the runtime to copy and for the job's mount table.
inline constexpr std::uint64_t kMinBoundEntries = 1024;

// The places in the container that the runtime or Preflight mounts on, makes or enters, which a
// bound folder must leave alone: the destination of each of `config`'s mounts, its process's
// working folder, the plan's user folders.
std::vector<std::string> places_touched(const nlohmann::json& config, const plan::RunPlan& plan);

// The folders of plan.image_sealed to bind into `root` (the overlay root, mounted, its user
// folders made), relative, in order: none for a job run as root (uid 0), who could write them;
// of the rest, those with kMinBoundEntries entries or more that no place of `touched` resolves
// into, onto or above, its links followed as the image has them; a sealed folder's sealed
// children are left to it, and bound when it is not. A place that cannot be resolved (a
// dangling link, a "..", no openat2) keeps every folder in the overlay.
std::vector<std::string> sealed_folders_to_bind(const plan::RunPlan& plan, const std::filesystem::path& root,
                                                const std::vector<std::string>& touched);

// Binds of the image's folders over the overlay root, read-write, nosuid, nodev and, where the
// host lets the mount's time flags change, noatime; unmounted in reverse order when this goes
// out of scope, before the root's overlay.
class SealedBinds {
 public:
  SealedBinds() = default;
  SealedBinds(const SealedBinds&) = delete;
  SealedBinds& operator=(const SealedBinds&) = delete;
  ~SealedBinds();

  // Binds each of `folders` of `image_rootfs` at its place in `root`; a folder that cannot be
  // bound whole stays in the overlay. The folders bound.
  std::vector<std::string> mount(const std::filesystem::path& image_rootfs, const std::filesystem::path& root,
                                 const std::vector<std::string>& folders);

 private:
  std::vector<std::filesystem::path> mounted_;
};

}  // namespace preflight::sandbox
