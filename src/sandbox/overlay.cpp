#include "sandbox/overlay.hpp"

#include <fmt/format.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace preflight::sandbox {
namespace fs = std::filesystem;

Status Overlay::mount(const fs::path& lower, const fs::path& upper, const fs::path& work,
                      const fs::path& merged) {
  std::error_code ec;
  for (const auto& dir : {merged, upper, work}) fs::create_directories(dir, ec);
  // volatile: the upper layer is thrown away after the run, so unmounting need not sync it.
  std::string options = fmt::format("lowerdir={},upperdir={},workdir={},volatile", lower.string(),
                                    upper.string(), work.string());
  if (::mount("overlay", merged.c_str(), "overlay", 0, options.c_str()) != 0)
    return Error::runtime(fmt::format("cannot mount an overlay of {} at {}: {}", lower.string(),
                                      merged.string(), std::strerror(errno)));
  merged_ = merged;
  return Ok{};
}

Overlay::~Overlay() {
  if (!merged_.empty() && ::umount2(merged_.c_str(), 0) != 0) ::umount2(merged_.c_str(), MNT_DETACH);
}

namespace {

// The folders of a copy-on-write code folder belong to the job's user, as the code the
// platform unpacks for a job does, so that it may write into them too. Only folders: a
// folder's copy-up is cheap, a file's copies its data. Without root, a folder of another
// host user than Preflight's has no owner in the namespace and cannot be copied up: it stays
// as it is, not writable to the job (docs/rootless.md).
void give_folders_to_user(const fs::path& merged, const plan::RunPlan& plan) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(merged, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec))
      static_cast<void>(::lchown(it->path().c_str(), plan.process.uid, plan.process.gid));
  }
}

}  // namespace

Status mount_copy_on_write(const plan::RunPlan& plan, std::deque<Overlay>& overlays) {
  for (const auto& m : plan.mounts) {
    if (m.overlay_dir.empty()) continue;
    Overlay& overlay = overlays.emplace_back();
    if (auto status = overlay.mount(m.source, m.overlay().upper(), m.overlay().work(), m.bound_source());
        !status)
      return status;
    give_folders_to_user(overlay.path(), plan);
  }
  return Ok{};
}

}  // namespace preflight::sandbox
