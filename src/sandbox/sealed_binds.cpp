#include "sandbox/sealed_binds.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <optional>

#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::sandbox {
namespace fs = std::filesystem;

namespace {

std::string fd_path(int fd) { return fmt::format("/proc/self/fd/{}", fd); }

// The host path of what `fd` is open at.
std::optional<std::string> real_path(int fd) {
  char target[PATH_MAX];
  const ssize_t n = ::readlink(fd_path(fd).c_str(), target, sizeof target);
  if (n <= 0 || static_cast<std::size_t>(n) == sizeof target) return std::nullopt;
  return std::string(target, static_cast<std::size_t>(n));
}

// Where `place` (absolute, in the container) lands in the root open at `root_fd`, whose host
// path is `root_real`, relative to it ("" for the root itself): its longest existing part
// resolved as the image's links lead, then the first name the runtime would make there.
// Nullopt when that cannot be told: a "..", a name that exists but does not open (a dangling
// link), a link that leads out of the root, no openat2.
std::optional<std::string> landing(int root_fd, const std::string& root_real, const std::string& place) {
  std::vector<std::string> names;
  for (const auto& part : fs::path(place).relative_path()) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return std::nullopt;
    names.push_back(part.string());
  }
  for (std::size_t existing = names.size() + 1; existing-- > 0;) {
    std::string prefix = "/";
    for (std::size_t i = 0; i < existing; ++i) prefix += (i == 0 ? "" : "/") + names[i];
    auto opened = open_below(root_fd, prefix, O_PATH, Links::InRoot);
    if (!opened) continue;
    auto real = real_path(opened->get());
    if (!real) return std::nullopt;
    std::string relative;
    if (*real != root_real) {
      if (!is_under(*real, root_real)) return std::nullopt;
      relative = real->substr(root_real.size() + 1);
    }
    if (existing == names.size()) return relative;
    struct stat st {};
    if (::fstatat(opened->get(), names[existing].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
      return std::nullopt;
    return relative.empty() ? names[existing] : relative + "/" + names[existing];
  }
  return std::nullopt;
}

// Whether a place landing at `place` leaves the folder `folder` (both relative) alone.
bool leaves_alone(const std::string& place, const std::string& folder) {
  return !place.empty() && place != folder && !is_under(place, folder) && !is_under(folder, place);
}

// The mount flags of `path`'s mount that a remount in a user namespace may not change: its
// time flags.
unsigned long time_flags(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return 0;
  unsigned long flags = 0;
  if ((st.f_flag & ST_NOATIME) != 0) flags |= MS_NOATIME;
  if ((st.f_flag & ST_NODIRATIME) != 0) flags |= MS_NODIRATIME;
  if ((st.f_flag & ST_RELATIME) != 0) flags |= MS_RELATIME;
  return flags;
}

}  // namespace

std::vector<std::string> places_touched(const nlohmann::json& config, const plan::RunPlan& plan) {
  std::vector<std::string> places;
  for (const auto& mount : config.value("mounts", nlohmann::json::array()))
    places.push_back(mount.value("destination", "/"));
  places.push_back(config.contains("process") ? config.at("process").value("cwd", "/") : "/");
  for (const auto& dir : plan.user_dirs) places.push_back(dir.path);
  return places;
}

std::vector<std::string> sealed_folders_to_bind(const plan::RunPlan& plan, const fs::path& root,
                                                const std::vector<std::string>& touched) {
  std::vector<std::string> chosen;
  if (plan.process.uid == 0 || plan.image_sealed.empty()) return chosen;
  auto root_fd = open_folder(root);
  if (!root_fd) return chosen;
  const auto root_real = real_path(root_fd->get());
  if (!root_real) return chosen;
  std::vector<std::string> landings;
  for (const std::string& place : touched) {
    auto landed = landing(root_fd->get(), *root_real, place);
    if (!landed) return chosen;
    landings.push_back(std::move(*landed));
  }
  for (const image::SealedFolder& folder : plan.image_sealed) {
    if (folder.entries < kMinBoundEntries) continue;
    if (std::any_of(chosen.begin(), chosen.end(), [&](auto& bound) { return is_under(folder.path, bound); }))
      continue;
    if (std::all_of(landings.begin(), landings.end(),
                    [&](const std::string& place) { return leaves_alone(place, folder.path); }))
      chosen.push_back(folder.path);
  }
  return chosen;
}

std::vector<std::string> SealedBinds::mount(const fs::path& image_rootfs, const fs::path& root,
                                            const std::vector<std::string>& folders) {
  std::vector<std::string> bound;
  auto image_fd = open_folder(image_rootfs);
  auto root_fd = open_folder(root);
  if (!image_fd || !root_fd) return bound;
  for (const std::string& folder : folders) {
    // Both ends opened without following a link, so that the bind is of the image's folder
    // and lands at the folder's own place.
    auto source = open_below(image_fd->get(), folder, O_PATH | O_DIRECTORY, Links::None);
    auto target = open_below(root_fd->get(), folder, O_PATH | O_DIRECTORY, Links::None);
    if (!source || !target) continue;
    if (::mount(fd_path(source->get()).c_str(), fd_path(target->get()).c_str(), nullptr, MS_BIND, nullptr) !=
        0)
      continue;
    const fs::path at = root / folder;
    mounted_.push_back(at);
    constexpr unsigned long kRemount = MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV;
    // Without root on the host the mount's time flags are locked as the host has them.
    if (::mount(nullptr, at.c_str(), nullptr, kRemount | MS_NOATIME, nullptr) != 0 &&
        ::mount(nullptr, at.c_str(), nullptr, kRemount | time_flags(at), nullptr) != 0) {
      ::umount2(at.c_str(), MNT_DETACH);
      mounted_.pop_back();
      continue;
    }
    bound.push_back(folder);
  }
  return bound;
}

SealedBinds::~SealedBinds() {
  for (auto it = mounted_.rbegin(); it != mounted_.rend(); ++it)
    if (::umount2(it->c_str(), 0) != 0) ::umount2(it->c_str(), MNT_DETACH);
}

}  // namespace preflight::sandbox
