// Keeps a running job within its disk (docs/security.md): the platform's quota (the profile's
// limits.disk) over what the job has written, and the host's free space, which no run may
// use up. What the job wrote is the blocks of its writable places on the host (the root's
// upper layer, its outputs, kept and copy-on-write folders), measured by a bounded walk that
// follows no link; the free space is the run folder's file system's.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "plan/run_plan.hpp"

namespace preflight::sandbox {

// At most this many entries are counted per measure, so that a job of many small files costs
// the watch a bounded time; what lies past them is not counted.
inline constexpr std::uint64_t kDiskWalkEntries = 1'000'000;

class DiskWatch {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Over { Nothing, Quota, HostDisk };

  // `started`: the container's start; the first measure is a second later.
  DiskWatch(const plan::RunPlan& plan, Clock::time_point started);

  // Measures when a measure is due at `now` (else Over::Nothing): what the job went over.
  Over check(Clock::time_point now);
  // Measures now: what the job went over.
  Over measure();

  Clock::time_point due() const { return due_; }
  std::uint64_t written_bytes() const { return written_; }  // at the last measure
  std::uint64_t free_bytes() const { return free_; }        // of the run folder's disk, at the last measure

  // The host's free space a run may not take, of a disk of `disk_size`: 2% of the disk, at least
  // 1 GiB and at most 4 GiB, and no more than a quarter of a small one. The same for every run, so that
  // runs one after another do not each take half of what the last left (pipeline/run_room).
  static std::uint64_t host_floor(std::uint64_t disk_size);

 private:
  std::vector<std::filesystem::path> roots_;
  std::filesystem::path run_dir_;
  std::uint64_t quota_ = 0;  // 0: the platform has none
  std::uint64_t floor_ = 0;
  std::uint64_t written_ = 0;
  std::uint64_t free_ = 0;
  Clock::time_point due_;
};

// The free bytes (for an ordinary user) and the size of the file system holding `path`;
// zeros when they cannot be told.
struct DiskSpace {
  std::uint64_t free = 0;
  std::uint64_t size = 0;
};
DiskSpace disk_space(const std::filesystem::path& path);

// The blocks the files and folders below `roots` take (each inode once), as a quota counts
// them: a sparse file counts what it holds, not its length. At most `max_entries` entries.
std::uint64_t disk_used(const std::vector<std::filesystem::path>& roots, std::uint64_t max_entries);

}  // namespace preflight::sandbox
