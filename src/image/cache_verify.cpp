// RootfsCache::verify, for `preflight cache verify`: every name in <cache>/rootfs checked
// against what the cache records of it. The cache is read as untrusted: no link is followed
// and every read is bounded (docs/images.md "The cache").
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "image/digest.hpp"
#include "image/rootfs_cache.hpp"
#include "image/sealed_folders.hpp"
#include "image/tree_digest.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

namespace preflight::image {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxCheckedNames = 100'000;   // names in rootfs/ looked at
constexpr std::size_t kMaxRecordBytes = 4096;       // the marker and the tree record
constexpr std::size_t kMaxConfigBytes = 16u << 20;  // an image config (docker's are a few KB)

// The file `name` of the entry open at `entry`, a regular file read without following a link.
Result<std::string> read_entry_file(int entry, const std::string& name, std::size_t max_bytes) {
  auto file = open_below(entry, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, Links::None);
  if (!file) return std::move(file).error();
  return read_regular(file->get(), max_bytes, name);
}

// A one-line record file (the marker, the tree digest) without its newline.
std::string record_line(std::string_view text) { return trim(text.substr(0, text.find('\n'))); }

bool lower_hex_digits(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool is_lower_hex(std::string_view text) { return text.size() == 64 && lower_hex_digits(text); }

// A temporary folder ".tmp-...-PID" is in progress while its process lives.
EntryCheck check_temporary(const std::string& name) {
  const long pid = std::strtol(name.c_str() + name.rfind('-') + 1, nullptr, 10);
  if (pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH))
    return {name, EntryCheck::State::InProgress, fmt::format("an unpack or removal by process {}", pid)};
  return {name, EntryCheck::State::Incomplete,
          "left by an unpack or removal whose process is gone; `preflight cache prune` removes it"};
}

}  // namespace

std::vector<EntryCheck> RootfsCache::verify(const std::vector<std::string>& only) const {
  std::vector<EntryCheck> checks;
  const int cache_fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (cache_fd < 0) return checks;  // no cache yet: nothing to check
  DIR* listing = ::fdopendir(cache_fd);
  if (listing == nullptr) {
    ::close(cache_fd);
    return checks;
  }
  std::vector<std::string> names;
  while (const dirent* found = ::readdir(listing)) {
    const std::string_view name = found->d_name;
    if (name == "." || name == "..") continue;
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    if (names.size() == kMaxCheckedNames) {
      checks.push_back({"...", EntryCheck::State::Foreign,
                        fmt::format("more than {} names in {}: the rest were not checked", kMaxCheckedNames,
                                    dir_.string())});
      break;
    }
    names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    EntryCheck check = check_entry(::dirfd(listing), name);
    // An entry pruned while it was checked is no longer in the cache.
    struct stat gone {};
    if (check.state != EntryCheck::State::Verified &&
        ::fstatat(::dirfd(listing), name.c_str(), &gone, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
      continue;
    checks.push_back(std::move(check));
  }
  ::closedir(listing);
  return checks;
}

Result<std::string> RootfsCache::find_entry(std::string_view digest) const {
  constexpr std::size_t kShortest = 12;  // hex digits, as `cache list` prints them
  const std::string_view hex = digest.substr(std::min(digest.size(), std::string_view("sha256:").size()));
  if (!digest.starts_with("sha256:") || hex.size() < kShortest || hex.size() > 64 || !lower_hex_digits(hex))
    return Error::bad_input(
        fmt::format("\"{}\" is not an image digest: sha256: and at least {} of its lower-case "
                    "hex digits, as `preflight cache list` prints it",
                    cut_utf8(std::string(digest), 80), kShortest));
  const std::string prefix = std::string(cache_names::kEntryPrefix) + std::string(hex);
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.starts_with(prefix) && name.size() == cache_names::kEntryPrefix.size() + 64)
      found.push_back(name);
  }
  if (found.size() == 1) return found.front();
  if (found.empty())
    return Error::bad_input(
        fmt::format("{}: no unpacked image in {} has this digest (`preflight cache list` "
                    "shows those there; a run of a job that uses the image unpacks it)",
                    digest, dir_.string()));
  return Error::bad_input(fmt::format(
      "{}: {} unpacked images begin with this digest; give more of its digits", digest, found.size()));
}

EntryCheck RootfsCache::check_entry(int cache_fd, const std::string& name) const {
  using State = EntryCheck::State;
  struct stat st {};
  if (::fstatat(cache_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return {name, State::Foreign, std::string("cannot be read: ") + std::strerror(errno)};
  const bool folder = S_ISDIR(st.st_mode);
  if (folder && name.starts_with(cache_names::kTempPrefix)) return check_temporary(name);
  const std::string hex = name.substr(std::min(name.size(), cache_names::kEntryPrefix.size()));
  if (!folder || !name.starts_with(cache_names::kEntryPrefix) || !is_lower_hex(hex)) {
    return {name, State::Foreign,
            fmt::format("not an entry of the cache ({} named sha256-<64 hex digits>)",
                        folder ? "an entry is a folder" : "not a folder; an entry is a folder")};
  }
  auto entry = open_below(cache_fd, name, O_PATH | O_DIRECTORY, Links::None);
  if (!entry) return {name, State::Corrupt, entry.error().message};
  // Held shared like a run's use (without stamping a use): no prune removes it meanwhile.
  // An entry never used has no lock file yet, and is checked without one.
  UniqueFd lock;
  if (auto opened = open_below(entry->get(), cache_names::kLock, O_RDONLY | O_NONBLOCK, Links::None)) {
    lock = std::move(*opened);
    ::flock(lock.get(), LOCK_SH);
  }
  const std::string digest = "sha256:" + hex;
  auto marker = read_entry_file(entry->get(), cache_names::kComplete, kMaxRecordBytes);
  if (!marker)
    return {name, State::Incomplete,
            "no completion marker (an unpack that did not finish): " + marker.error().message};
  if (record_line(*marker) != digest)
    return {name, State::Corrupt,
            fmt::format("its completion marker names {}", cut_utf8(record_line(*marker), 80))};
  auto config = read_entry_file(entry->get(), cache_names::kConfig, kMaxConfigBytes);
  if (!config) return {name, State::Corrupt, "its image config: " + config.error().message};
  if (sha256_hex(*config) != hex) return {name, State::Corrupt, "its image config does not match its digest"};
  struct stat root {};
  if (::fstatat(entry->get(), cache_names::kRootfs, &root, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISDIR(root.st_mode))
    return {name, State::Corrupt, "its root filesystem is missing or not a folder"};
  auto recorded = read_entry_file(entry->get(), cache_names::kTree, kMaxRecordBytes);
  if (!recorded) {
    return {name, State::Unchecked,
            "its config matches its digest; its files were unpacked before Preflight recorded their digest "
            "(`preflight cache prune` and the next run unpack it again with one)"};
  }
  auto limits = unpack_limits();
  if (!limits) return {name, State::Corrupt, limits.error().message};
  auto tree = tree_digest(dir_ / name / cache_names::kRootfs, *limits);
  if (!tree) return {name, State::Corrupt, "its files: " + tree.error().message};
  if (tree->digest != record_line(*recorded)) {
    return {name, State::Corrupt,
            fmt::format("its files changed since they were unpacked (digest {}, recorded {})",
                        tree->digest.substr(0, 19), cut_utf8(record_line(*recorded), 19))};
  }
  // The record of its sealed folders, when it has one, is what its files say.
  if (auto sealed_record = read_entry_file(entry->get(), cache_names::kSealed, kMaxSealedRecordBytes)) {
    auto sealed = sealed_folders(dir_ / name / cache_names::kRootfs, limits->max_entries);
    if (!sealed) return {name, State::Corrupt, "its files: " + sealed.error().message};
    if (parse_sealed(*sealed_record) != std::optional(*sealed))
      return {name, State::Corrupt,
              "its record of sealed folders does not match its files: a run would bind folders the job "
              "may write (`preflight cache prune` and the next run unpack it again)"};
  }
  EntryCheck verified{name, State::Verified, {}};
  verified.files = tree->files;
  verified.bytes = tree->bytes;
  return verified;
}

}  // namespace preflight::image
