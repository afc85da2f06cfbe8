#include "sandbox/disk_watch.hpp"

#include <sys/statvfs.h>

#include <algorithm>
#include <set>
#include <utility>

#include "util/untrusted_fs.hpp"

namespace preflight::sandbox {
namespace fs = std::filesystem;

namespace {

constexpr std::chrono::seconds kMinInterval{1};
// A measure may take at most a tenth of the time between two: a slow walk spaces them out.
constexpr int kIntervalPerWalk = 10;

}  // namespace

DiskSpace disk_space(const fs::path& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return {};
  return {static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize,
          static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize};
}

std::uint64_t disk_used(const std::vector<fs::path>& roots, std::uint64_t max_entries) {
  std::uint64_t bytes = 0;
  std::set<std::pair<dev_t, ino_t>> linked;  // files of several names, counted once
  for (const fs::path& root : roots) {
    if (max_entries == 0) break;
    walk_job_tree(root, max_entries, [&](const std::string&, const struct stat& st) {
      --max_entries;
      if (st.st_nlink > 1 && !S_ISDIR(st.st_mode) && !linked.emplace(st.st_dev, st.st_ino).second) return;
      bytes += static_cast<std::uint64_t>(st.st_blocks) * 512;
    });
  }
  return bytes;
}

std::uint64_t DiskWatch::host_floor(std::uint64_t disk_size) {
  // 2% of a large disk would refuse every run on a full laptop (20 GiB of a 1 TB disk): 4 GiB
  // leaves the system room enough.
  return std::min(disk_size / 4, std::clamp<std::uint64_t>(disk_size / 50, 1ull << 30, 4ull << 30));
}

DiskWatch::DiskWatch(const plan::RunPlan& plan, Clock::time_point started)
    : run_dir_(plan.run_dir), quota_(plan.limits.disk_bytes), due_(started + kMinInterval) {
  roots_.push_back(plan.layout().upper());
  for (const auto& m : plan.mounts) {
    if (!m.read_only) roots_.push_back(m.overlay_dir.empty() ? m.source : m.overlay().upper());
  }
  const DiskSpace disk = disk_space(run_dir_);
  free_ = disk.free;
  floor_ = disk.size ? host_floor(disk.size) : 0;
}

DiskWatch::Over DiskWatch::check(Clock::time_point now) { return now < due_ ? Over::Nothing : measure(); }

DiskWatch::Over DiskWatch::measure() {
  const auto started = Clock::now();
  free_ = disk_space(run_dir_).free;
  if (quota_) written_ = disk_used(roots_, kDiskWalkEntries);
  const auto took = Clock::now() - started;
  due_ = Clock::now() + std::max<Clock::duration>(kMinInterval, took * kIntervalPerWalk);
  if (floor_ && free_ < floor_) {
    if (!quota_) written_ = disk_used(roots_, kDiskWalkEntries);  // for the message
    return Over::HostDisk;
  }
  if (quota_ && written_ > quota_) return Over::Quota;
  return Over::Nothing;
}

}  // namespace preflight::sandbox
