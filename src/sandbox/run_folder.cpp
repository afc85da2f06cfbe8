#include "sandbox/run_folder.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sstream>
#include <utility>
#include <vector>

#include "sandbox/container.hpp"
#include "sandbox/disk_watch.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::sandbox {
namespace fs = std::filesystem;

namespace {

constexpr const char* kLockFile = ".lock";

// Whether the process that made `dir` is gone: its lock, taken here without waiting (and kept
// in `lock`), is free. A folder without a lock (an older Preflight's, or one this instant
// being made) counts as gone once it is a day old.
bool owner_gone(const fs::path& dir, fs::file_time_type changed, UniqueFd& lock) {
  int fd = ::open((dir / kLockFile).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT && changed < fs::file_time_type::clock::now() - std::chrono::hours(24);
  lock = UniqueFd(fd);
  return ::flock(lock.get(), LOCK_EX | LOCK_NB) == 0;
}

// A mount point of /proc/self/mountinfo (its fifth field) with its octal escapes undone.
std::string unescape(const std::string& field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      out += static_cast<char>(std::stoi(field.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

// What is mounted in `dir`, deepest first.
std::vector<std::string> mounts_in(const fs::path& dir) {
  std::vector<std::string> points;
  std::istringstream lines(read_file("/proc/self/mountinfo").value_or(""));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point;
    if (!(fields >> id >> parent >> device >> root >> point)) continue;
    if (std::string unescaped = unescape(point); is_under(unescaped, dir.string()))
      points.push_back(std::move(unescaped));
  }
  std::sort(points.begin(), points.end(), [](auto& a, auto& b) { return a.size() > b.size(); });
  return points;
}

// A folder under `parent` whose owner is gone, with its lock, taken here: no other Preflight
// reaps or prunes it while this is held.
struct Abandoned {
  fs::file_time_type time;
  fs::path dir;
  UniqueFd lock;
};

// The folders under `parent` owned by this user that no process holds; `held` counts the others.
std::vector<Abandoned> find_abandoned(const fs::path& parent, std::size_t& held) {
  std::vector<Abandoned> abandoned;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    struct stat st {};
    if (entry.path().filename().string().starts_with(".")) continue;  // being made (RunFolder::create)
    if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) continue;
    const auto changed = entry.last_write_time(ec);
    UniqueFd lock;
    if (owner_gone(entry.path(), changed, lock))
      abandoned.push_back({changed, entry.path(), std::move(lock)});
    else
      ++held;
  }
  return abandoned;
}

// A run that ended removed its container's root (bundle/rootfs): only one cut short has a
// container, mounts or a cgroup left to reap.
bool cut_short(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(model::RunLayout(dir).rootfs(), ec);
}

std::string container_of(const fs::path& dir) { return "preflight-" + dir.filename().string(); }

// What the Preflight of a run cut short never did: tidy_run, once nothing is mounted in the
// folder, since nothing is ever removed through a mount.
void tidy_cut_short(const fs::path& dir) {
  const model::RunLayout layout(dir);
  if (mounts_in(dir).empty()) tidy_run(layout.scratch(), layout.kept_writes());
}

}  // namespace

Result<RunFolder> RunFolder::create_new(const fs::path& parent, const std::function<std::string()>& name) {
  for (int draw = 1;; ++draw) {
    int error = 0;
    auto folder = make(parent / name(), error);
    if (folder || error != EEXIST || draw == kNameDraws) return folder;
  }
}

Result<RunFolder> RunFolder::create(const fs::path& dir) {
  int error = 0;
  return make(dir, error);
}

Result<RunFolder> RunFolder::make(const fs::path& dir, int& error) {
  // Made and locked under a hidden name, which reapers pass over, then renamed into place:
  // no other Preflight ever sees the folder without its lock held.
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);
  const fs::path staging = dir.parent_path() / ("." + dir.filename().string());
  auto fail = [&](const char* what, bool made) {
    error = errno;
    if (made) fs::remove_all(staging, ec);
    return Error::runtime(fmt::format("cannot {} {}: {}", what, dir.string(), std::strerror(error)));
  };
  // The user's own: what the job wrote is there, readable by no other user of the machine or
  // of a shared cache (docs/security.md "job's files → the host's users").
  if (::mkdir(staging.c_str(), 0700) != 0) return fail("make", false);
  UniqueFd lock(
      ::open((staging / kLockFile).c_str(), O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0) return fail("lock", true);
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, dir.c_str(), RENAME_NOREPLACE) != 0)
    return fail("make", true);
  return RunFolder(dir, std::move(lock));
}

std::vector<fs::path> tidy_run(const std::vector<fs::path>& scratch, const std::vector<fs::path>& written) {
  std::error_code ec;
  for (const auto& layer : scratch) fs::remove_all(layer, ec);
  std::vector<fs::path> removed;
  for (const auto& folder : written) {
    if (!fs::exists(fs::symlink_status(folder, ec)) || disarm_job_tree(folder, kDiskWalkEntries).whole)
      continue;
    fs::remove_all(folder, ec);
    removed.push_back(folder);
  }
  return removed;
}

Reaped reap_abandoned(const fs::path& parent, std::size_t keep) {
  Reaped reaped;
  std::size_t held = 0;
  std::vector<Abandoned> abandoned = find_abandoned(parent, held);
  std::vector<fs::path> running;  // runs whose container this process could not delete
  for (const Abandoned& run : abandoned) {
    if (!cut_short(run.dir)) continue;
    const std::string container = container_of(run.dir);
    const bool deleted = delete_container(container);
    if (deleted) ++reaped.containers;
    for (const auto& point : mounts_in(run.dir))
      if (::umount2(point.c_str(), MNT_DETACH) == 0) ++reaped.mounts;
    // A container this process could not delete (without root, one only the process outside
    // the user namespace reaches) keeps its folder and root: they mark the run as cut short for
    // that one, which stops it after this process ends.
    if (deleted || !container_exists(container))
      tidy_cut_short(run.dir);
    else
      running.push_back(run.dir);
  }
  std::sort(abandoned.begin(), abandoned.end(), [](auto& a, auto& b) { return a.time > b.time; });
  const std::vector<std::string> mounted = mounts_in(parent);  // what would not go, read once
  for (std::size_t i = held >= keep ? 0 : keep - held; i < abandoned.size(); ++i) {
    const std::string dir = abandoned[i].dir.string();
    if (std::any_of(mounted.begin(), mounted.end(), [&](auto& point) { return is_under(point, dir); }))
      continue;  // never delete through a mount
    if (std::find(running.begin(), running.end(), abandoned[i].dir) != running.end())
      continue;  // nor from under a container still running (its mounts are in its namespace)
    std::error_code ec;
    fs::remove_all(abandoned[i].dir, ec);
    if (!ec) ++reaped.removed;
  }
  return reaped;
}

std::size_t stop_abandoned_containers(const fs::path& parent) {
  std::size_t held = 0, stopped = 0;
  for (const Abandoned& run : find_abandoned(parent, held))
    if (cut_short(run.dir) && delete_container(container_of(run.dir))) ++stopped;
  return stopped;
}

RunsPruned prune_runs(const fs::path& parent, std::uint64_t wanted) {
  RunsPruned pruned;
  if (wanted == 0) return pruned;
  struct Finished {
    Abandoned run;
    std::uint64_t written = 0;  // by a run Preflight stopped, else 0
  };
  std::size_t held = 0;
  std::vector<Finished> finished;
  const std::vector<std::string> mounted = mounts_in(parent);  // what would not go
  for (Abandoned& run : find_abandoned(parent, held)) {
    const std::string dir = run.dir.string();
    if (std::any_of(mounted.begin(), mounted.end(), [&](auto& point) { return is_under(point, dir); }))
      continue;  // never delete through a mount
    const model::RunLayout layout(run.dir);
    std::error_code ec;
    const bool stopped = fs::exists(layout.stopped(), ec);
    finished.push_back({std::move(run), stopped ? disk_used(layout.kept_writes(), kDiskWalkEntries) : 0});
  }
  // What stopped runs wrote, largest first: a job stopped for filling the disk holds the most.
  std::sort(finished.begin(), finished.end(), [](auto& a, auto& b) { return a.written > b.written; });
  std::error_code ec;
  for (Finished& f : finished) {
    if (pruned.bytes >= wanted || f.written == 0) break;
    for (const auto& written : model::RunLayout(f.run.dir).kept_writes()) fs::remove_all(written, ec);
    pruned.bytes += std::exchange(f.written, 0);
    ++pruned.outputs;
  }
  // Then whole folders, oldest first.
  std::sort(finished.begin(), finished.end(), [](auto& a, auto& b) { return a.run.time < b.run.time; });
  for (const Finished& f : finished) {
    if (pruned.bytes >= wanted) break;
    const std::uint64_t bytes = disk_used({f.run.dir}, kDiskWalkEntries);
    if (fs::remove_all(f.run.dir, ec); ec) continue;
    pruned.bytes += bytes;
    ++pruned.folders;
  }
  return pruned;
}

}  // namespace preflight::sandbox
