#include "pipeline/run_room.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "image/rootfs_cache.hpp"
#include "sandbox/disk_watch.hpp"
#include "sandbox/run_folder.hpp"
#include "util/text.hpp"

namespace preflight::pipeline {
namespace fs = std::filesystem;

namespace {

std::uint64_t images_bytes(const image::RootfsCache& images) {
  std::uint64_t bytes = 0;
  for (const auto& entry : images.entries()) bytes += entry.bytes;
  return bytes;
}

CacheRoom measure(const image::RootfsCache& images, const fs::path& runs_dir, std::uint64_t limit) {
  const sandbox::DiskSpace disk = sandbox::disk_space(runs_dir);
  return {sandbox::disk_used({runs_dir}, sandbox::kDiskWalkEntries), images_bytes(images), limit, disk.free,
          disk.size ? sandbox::DiskWatch::host_floor(disk.size) : 0};
}

std::string plural(std::size_t count, const char* what) {
  return fmt::format("{} {}{}", count, what, count == 1 ? "" : "s");
}

// Frees up to `wanted` bytes of runs, then of images; says what went.
void free_room(const image::RootfsCache& images, const fs::path& runs_dir, const CacheRoom& room,
               std::uint64_t wanted, const std::function<void(const std::string&)>& progress) {
  const auto pruned = sandbox::prune_runs(runs_dir, wanted);
  if (pruned.outputs + pruned.folders > 0 && progress)
    progress(
        fmt::format("removed {} of earlier runs from {} (the outputs of {}, {}) to make room for this run",
                    human_size(pruned.bytes), runs_dir.string(), plural(pruned.outputs, "stopped run"),
                    plural(pruned.folders, "whole run folder")));
  wanted -= std::min(wanted, pruned.bytes);
  if (wanted == 0) return;
  for (const auto& removed : images.prune(room.images_bytes - std::min(wanted, room.images_bytes)))
    if (progress)
      progress(fmt::format("removed unused image {} ({}) from the cache to make room for this run",
                           removed.digest, human_size(removed.bytes)));
}

}  // namespace

std::uint64_t room_wanted(const CacheRoom& room) {
  const std::uint64_t used = room.runs_bytes + room.images_bytes;
  const std::uint64_t over = used > room.limit ? used - room.limit : 0;
  return std::max(over, room.floor > room.free ? room.floor - room.free : 0);
}

Status make_room_for_run(const fs::path& runs_dir, std::size_t kept_runs,
                         const std::function<void(const std::string&)>& progress) {
  sandbox::reap_abandoned(runs_dir, kept_runs);
  auto limit = image::cache_limit();
  if (!limit) return std::move(limit).error();
  std::error_code ec;
  fs::create_directories(runs_dir, ec);  // for its disk to be measured
  const image::RootfsCache images(runs_dir.parent_path());
  const CacheRoom room = measure(images, runs_dir, *limit);
  if (const std::uint64_t wanted = room_wanted(room)) free_room(images, runs_dir, room, wanted, progress);
  const sandbox::DiskSpace disk = sandbox::disk_space(runs_dir);
  if (disk.size == 0 || disk.free >= room.floor) return Ok{};
  return Error::runtime(fmt::format(
      "{}: its disk has {} free, less than the {} a run must leave free there (docs/security.md); remove "
      "finished runs and unused images with `preflight cache prune`, free space on that disk, or set "
      "PREFLIGHT_CACHE to a folder on a larger one",
      runs_dir.string(), human_size(disk.free), human_size(room.floor)));
}

}  // namespace preflight::pipeline
