#include "image/rootfs_cache.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include "image/digest.hpp"
#include "image/layer_unpacker.hpp"
#include "image/tree_digest.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace preflight::image {
namespace fs = std::filesystem;

namespace {

constexpr const char* kCompleteMarker = cache_names::kComplete;
constexpr const char* kLockFile = cache_names::kLock;
constexpr const char* kSizeFile = cache_names::kSize;
constexpr std::string_view kTempPrefix = cache_names::kTempPrefix;
constexpr std::string_view kEntryPrefix = cache_names::kEntryPrefix;

// Removes a temporary folder on every path out of unpack() unless it was handed over.
class TempFolder {
 public:
  explicit TempFolder(fs::path path) : path_(std::move(path)) {}
  ~TempFolder() {
    if (!path_.empty()) {
      std::error_code ignored;
      fs::remove_all(path_, ignored);
    }
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const fs::path& path() const { return path_; }
  void release() { path_.clear(); }  // the folder was moved into place: keep it

 private:
  fs::path path_;
};

// `create` is false only to look: a lock file made then would read as a use.
UniqueFd open_lock(const fs::path& entry, bool create = true) {
  return UniqueFd(
      ::open((entry / kLockFile).c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0644));
}

// The size an entry's files take, read from its size file; an entry made before there were
// size files is measured once and its size file written.
std::uint64_t entry_bytes(const fs::path& entry) {
  std::uint64_t bytes = 0;
  if (std::ifstream in(entry / kSizeFile); in >> bytes) return bytes;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(entry / "rootfs", fs::directory_options::none, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) bytes += it->file_size(ec);
  }
  std::ofstream(entry / kSizeFile) << bytes << "\n";
  return bytes;
}

}  // namespace

Result<UniqueFd> take_turn(const fs::path& lock_file, const std::string& waiting,
                           const ProgressSink& progress) {
  std::error_code ec;
  fs::create_directories(lock_file.parent_path(), ec);
  UniqueFd lock(::open(lock_file.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (lock.valid() && ::flock(lock.get(), LOCK_EX | LOCK_NB) == 0) return lock;
  if (lock.valid() && errno == EWOULDBLOCK) {
    if (progress) progress(waiting);
    int locked = 0;
    while ((locked = ::flock(lock.get(), LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (locked == 0) return lock;
  }
  return Error::runtime(lock_file.string() + ": cannot lock: " + std::strerror(errno));
}

RootfsCache::RootfsCache(const fs::path& cache_dir) : dir_(cache_dir / "rootfs") {}

fs::path RootfsCache::entry_dir(const std::string& digest) const {
  return dir_ / (std::string(kEntryPrefix) + digest_hex(digest));
}

bool RootfsCache::contains(const std::string& digest) const {
  std::error_code ec;
  return fs::exists(entry_dir(digest) / kCompleteMarker, ec);
}

// A temporary folder whose process is gone was left by a killed run (an unpack or a prune).
void RootfsCache::remove_abandoned_temporaries() const {
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind(kTempPrefix, 0) != 0) continue;
    auto dash = name.rfind('-');
    long pid = std::strtol(name.c_str() + dash + 1, nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
}

std::shared_ptr<const UniqueFd> RootfsCache::hold(const std::string& digest) const {
  const fs::path entry = entry_dir(digest);
  if (!contains(digest)) return nullptr;
  UniqueFd lock = open_lock(entry);
  if (!lock.valid() || ::flock(lock.get(), LOCK_SH) != 0) return nullptr;
  // A prune may have moved the entry away between the open and the lock: then this lock is
  // on the removed copy's file, and the entry is gone.
  struct stat held {
  }, now{};
  if (::fstat(lock.get(), &held) != 0 || ::stat((entry / kLockFile).c_str(), &now) != 0 ||
      held.st_ino != now.st_ino || held.st_dev != now.st_dev || !contains(digest))
    return nullptr;
  ::futimens(lock.get(), nullptr);  // the last use, for pruning
  return std::make_shared<const UniqueFd>(std::move(lock));
}

HeldRoot RootfsCache::held_root(const std::string& digest, std::shared_ptr<const UniqueFd> hold) const {
  const fs::path entry = entry_dir(digest);
  HeldRoot held{entry / cache_names::kRootfs, {}, std::move(hold)};
  if (auto text = read_regular_file(entry / cache_names::kSealed, kMaxSealedRecordBytes)) {
    held.sealed = parse_sealed(*text).value_or(std::vector<SealedFolder>{});
    return held;
  }
  auto limits = unpack_limits();
  if (!limits) return held;
  auto sealed = sealed_folders(held.rootfs, limits->max_entries);
  if (!sealed) return held;
  held.sealed = std::move(*sealed);
  // Whole or not at all: a run reading it meanwhile finds it missing, never half written.
  write_file_whole(entry / fmt::format(".{}-{:08x}", cache_names::kSealed, std::random_device()()),
                   entry / cache_names::kSealed, format_sealed(held.sealed));
  return held;
}

Result<HeldRoot> RootfsCache::unpack(const ImageSource& source, const std::string& ref_text,
                                     const ProgressSink& progress) {
  fs::path final_dir = entry_dir(source.digest);
  if (auto held = hold(source.digest)) return held_root(source.digest, std::move(held));

  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Error::runtime(dir_.string() + ": cannot create the image cache: " + ec.message());
  const std::string hex = digest_hex(source.digest);
  // Runs that find an image missing at once unpack it once: the first unpacks, the others
  // wait here and then find it in the cache.
  auto turn = take_turn(dir_.parent_path() / "locks" / ("unpack-" + hex),
                        "waiting for another Preflight's unpack of image " + ref_text + "...", progress);
  if (!turn) return std::move(turn).error();
  if (auto held = hold(source.digest))
    return held_root(source.digest, std::move(held));  // unpacked meanwhile
  remove_abandoned_temporaries();
  auto limit = cache_limit();
  if (!limit) return std::move(limit).error();

  // A folder of this unpack's own, made here or not at all: an unpack that does not take turns
  // (an older Preflight's) has its own. The pid comes last, for remove_abandoned_temporaries.
  const fs::path temp_dir = dir_ / fmt::format("{}{}-{:08x}-{}", kTempPrefix, hex.substr(0, 12),
                                               std::random_device()(), ::getpid());
  if (::mkdir(temp_dir.c_str(), 0755) != 0)
    return Error::runtime(temp_dir.string() + ": cannot create: " + std::strerror(errno));
  TempFolder temp(temp_dir);
  if (::mkdir((temp_dir / "rootfs").c_str(), 0755) != 0)
    return Error::runtime(temp_dir.string() + ": cannot create: " + std::strerror(errno));

  if (progress) {
    progress("unpacking image " + ref_text + " (" + std::to_string(source.layers.size()) + " layer" +
             (source.layers.size() == 1 ? "" : "s") + ") into " + final_dir.string() + "...");
  }
  auto started = std::chrono::steady_clock::now();
  auto limits = unpack_limits();
  if (!limits) return std::move(limits).error();
  LayerUnpacker unpacker(temp.path() / "rootfs", *limits);
  for (const auto& layer : source.layers) {
    if (Status s = unpacker.apply(layer); !s) return s.error().context("unpacking image " + ref_text);
  }
  {
    std::ofstream config(temp.path() / "config.json", std::ios::binary);
    config << source.config_json;
    std::ofstream size(temp.path() / kSizeFile);
    size << unpacker.bytes() << "\n";
    // What `preflight cache verify` checks the files against; an image past the walk's
    // bounds (deeper than its folders' bound) is kept without it.
    if (auto tree = tree_digest(temp.path() / "rootfs", *limits))
      std::ofstream(temp.path() / cache_names::kTree) << tree->digest << "\n";
    if (auto sealed = sealed_folders(temp.path() / "rootfs", limits->max_entries))
      std::ofstream(temp.path() / cache_names::kSealed) << format_sealed(*sealed);
    std::ofstream marker(temp.path() / kCompleteMarker);
    marker << source.digest << "\n";
    if (!config || !size || !marker || !open_lock(temp.path()).valid())
      return Error::runtime(temp.path().string() + ": cannot write the cache entry's metadata");
  }
  // An unpack that took no turn may finish the same image first: then its copy is used and ours dropped.
  if (::rename(temp.path().c_str(), final_dir.c_str()) == 0) temp.release();
  auto held = hold(source.digest);
  if (!held) {
    return Error::runtime(final_dir.string() +
                          ": cannot move the unpacked image into the cache: " + std::strerror(errno));
  }
  if (progress) {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    char line[64];
    std::snprintf(line, sizeof line, "unpacked in %.1f s", seconds);
    progress(line);
  }
  // The new entry is held, so it stays; older ones go, least recently used first.
  for (const CacheEntry& removed : prune(*limit)) {
    if (progress)
      progress("removed unused image " + removed.digest + " (" + human_size(removed.bytes) +
               ") from the cache, to keep it under " + human_size(*limit));
  }
  return held_root(source.digest, std::move(held));
}

std::vector<CacheEntry> RootfsCache::entries() const {
  std::vector<CacheEntry> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(kEntryPrefix, 0) != 0 || !fs::exists(it->path() / kCompleteMarker, ec)) continue;
    CacheEntry entry;
    entry.digest = "sha256:" + name.substr(kEntryPrefix.size());
    entry.dir = it->path();
    entry.bytes = entry_bytes(entry.dir);
    // An entry never held since it was made has no lock file yet: its last use is its making.
    UniqueFd probe = open_lock(entry.dir, false);
    entry.used = fs::last_write_time(entry.dir / (probe.valid() ? kLockFile : kCompleteMarker), ec);
    entry.in_use = probe.valid() && ::flock(probe.get(), LOCK_EX | LOCK_NB) != 0;
    found.push_back(std::move(entry));
  }
  std::sort(found.begin(), found.end(),
            [](const CacheEntry& a, const CacheEntry& b) { return a.used < b.used; });
  return found;
}

std::vector<CacheEntry> RootfsCache::prune(std::uint64_t keep_bytes) const {
  remove_abandoned_temporaries();
  std::vector<CacheEntry> all = entries(), removed;
  std::uint64_t total = 0;
  for (const CacheEntry& entry : all) total += entry.bytes;
  for (const CacheEntry& entry : all) {
    if (total <= keep_bytes) break;
    // Taken exclusively, the entry is moved out of the way at once, so that no run finds it
    // half removed; a run that holds it keeps it.
    UniqueFd lock = open_lock(entry.dir);
    if (!lock.valid() || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) continue;
    const fs::path doomed = dir_ / (std::string(kTempPrefix) + "pruned-" +
                                    entry.dir.filename().string().substr(kEntryPrefix.size(), 12) + "-" +
                                    std::to_string(::getpid()));
    if (::rename(entry.dir.c_str(), doomed.c_str()) != 0) continue;
    lock = UniqueFd();  // a run waiting for the entry finds it gone, and unpacks its own
    std::error_code ignored;
    fs::remove_all(doomed, ignored);
    total -= entry.bytes;
    removed.push_back(entry);
  }
  return removed;
}

Result<UnpackLimits> unpack_limits() {
  UnpackLimits limits;
  const char* text = std::getenv(kUnpackLimitVariable);
  if (text == nullptr || *text == '\0') return limits;
  auto bytes = parse_size(text);
  if (!bytes || *bytes == 0)
    return Error::bad_input(std::string(kUnpackLimitVariable) +
                            ": expected a size such as \"128Gi\", got \"" + text + "\"");
  limits.max_bytes = *bytes;
  return limits;
}

Result<std::uint64_t> cache_limit() {
  const char* text = std::getenv(kCacheLimitVariable);
  if (text == nullptr || *text == '\0') return kDefaultCacheLimit;
  auto bytes = parse_size(text);
  if (!bytes)
    return Error::bad_input(std::string(kCacheLimitVariable) + ": expected a size such as \"100Gi\", got \"" +
                            text + "\"");
  return *bytes;
}

bool kept_by_digest(const UnpackedImage& image, const fs::path& cache_dir) {
  if (digest_hex(image.digest).empty()) return false;
  const fs::path entry_root = RootfsCache(cache_dir).entry_dir(image.digest) / cache_names::kRootfs;
  return image.rootfs.lexically_normal() == entry_root.lexically_normal();
}

}  // namespace preflight::image
