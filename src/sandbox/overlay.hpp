// Overlay mounts of the sandbox: the container's root over the cached image, and the
// copy-on-write code folder of a platform whose code is writable. The lower layer is never
// written; writes land in the run's upper layer.
#pragma once

#include <deque>
#include <filesystem>

#include "plan/run_plan.hpp"
#include "util/error.hpp"

namespace preflight::sandbox {

// One overlay mount; unmounted when this goes out of scope.
class Overlay {
 public:
  Overlay() = default;
  Overlay(const Overlay&) = delete;
  Overlay& operator=(const Overlay&) = delete;
  ~Overlay();

  Status mount(const std::filesystem::path& lower, const std::filesystem::path& upper,
               const std::filesystem::path& work, const std::filesystem::path& merged);
  const std::filesystem::path& path() const { return merged_; }

 private:
  std::filesystem::path merged_;
};

// Mounts the plan's copy-on-write folders (MountPlan::overlay_dir) at their bound_source(),
// their folders given to the job's user. A deque: its overlays never move once mounted.
Status mount_copy_on_write(const plan::RunPlan& plan, std::deque<Overlay>& overlays);

}  // namespace preflight::sandbox
