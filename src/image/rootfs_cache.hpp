// The digest-keyed cache of unpacked root filesystems:
//   <cache>/rootfs/sha256-<hex>/{rootfs/, config.json, size, tree, sealed, lock, complete}
// An entry appears by an atomic rename of a finished temporary folder, so a present entry
// is always whole; a failed unpack leaves nothing behind. Each use holds the entry (a shared
// flock on `lock`, whose time is the last use) so that pruning, least recently used first,
// never takes an image from under a run; the cache is kept under a size bound
// ($PREFLIGHT_CACHE_LIMIT, docs/images.md "The cache"). `tree` records the digest of the
// entry's files as unpacked, and `sealed` its sealed folders (sealed_folders.hpp), which
// `preflight cache verify` recomputes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "image/image_source.hpp"
#include "image/image_store.hpp"
#include "image/layer_unpacker.hpp"
#include "image/sealed_folders.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::image {

// The environment variable that bounds the unpacked images' total size ("100Gi").
inline constexpr const char* kCacheLimitVariable = "PREFLIGHT_CACHE_LIMIT";
inline constexpr std::uint64_t kDefaultCacheLimit = 50ull << 30;

// The names in the cache's rootfs/ folder and in an entry's (docs/images.md "The cache").
namespace cache_names {
inline constexpr std::string_view kEntryPrefix = "sha256-";  // + the digest's hex: an entry
inline constexpr std::string_view kTempPrefix = ".tmp-";     // an unpack or removal in progress
inline constexpr const char* kComplete = "complete";         // the digest, written last
inline constexpr const char* kConfig = "config.json";        // the image config
inline constexpr const char* kLock = "lock";      // held shared by each use; its time is the last use
inline constexpr const char* kSize = "size";      // the bytes of the entry's files, as unpacked
inline constexpr const char* kTree = "tree";      // the digest of its files (tree_digest.hpp)
inline constexpr const char* kSealed = "sealed";  // its sealed folders (sealed_folders.hpp)
inline constexpr const char* kRootfs = "rootfs";  // the root filesystem
}  // namespace cache_names

// An entry of the cache, as listed or pruned.
struct CacheEntry {
  std::string digest;  // "sha256:<hex>"
  std::filesystem::path dir;
  std::uint64_t bytes = 0;  // its files' sizes as unpacked
  std::filesystem::file_time_type used;
  bool in_use = false;  // held by a run of this or another process
};

// What `preflight cache verify` found of one name in the cache's rootfs/ folder.
struct EntryCheck {
  enum class State {
    Verified,    // its config matches its digest, its files the digest recorded at its unpack
    Unchecked,   // its config matches; unpacked before tree digests were recorded
    InProgress,  // the temporary folder of a live process's unpack or removal
    Incomplete,  // a temporary folder whose process is gone, or an entry without its marker
    Foreign,     // not something the cache makes
    Corrupt,     // its marker, config or files do not match
  };
  std::string name;  // in <cache>/rootfs
  State state = State::Foreign;
  std::string detail;       // why, for all but Verified
  std::uint64_t files = 0;  // Verified: its files, folders and links
  std::uint64_t bytes = 0;  // Verified: its files' contents
  bool fails() const {
    return state == State::Incomplete || state == State::Foreign || state == State::Corrupt;
  }
};

// An entry as a run uses it.
struct HeldRoot {
  std::filesystem::path rootfs;
  std::vector<SealedFolder> sealed;
  std::shared_ptr<const UniqueFd> hold;  // UnpackedImage::hold
};

class RootfsCache {
 public:
  explicit RootfsCache(const std::filesystem::path& cache_dir);

  // The entry's folder for a "sha256:<hex>" digest.
  std::filesystem::path entry_dir(const std::string& digest) const;
  bool contains(const std::string& digest) const;

  // Unpacks the source's layers into a new entry unless one exists, then holds it and keeps
  // the cache under its bound. An entry unpacked before sealed folders were recorded gets its
  // record now (one walk of its files' modes).
  Result<HeldRoot> unpack(const ImageSource& source, const std::string& ref_text,
                          const ProgressSink& progress);

  // Every whole entry, least recently used first.
  std::vector<CacheEntry> entries() const;
  // Removes entries no run holds, least recently used first, until those left take at most
  // `keep_bytes`; returns the removed ones.
  std::vector<CacheEntry> prune(std::uint64_t keep_bytes) const;
  // Checks the names in the cache's rootfs/ folder, in name order: `names` among them, or every
  // one when `names` is empty. An entry is held (shared) while it is checked, and one pruned
  // meanwhile is left out.
  std::vector<EntryCheck> verify(const std::vector<std::string>& names = {}) const;
  // The name in rootfs/ of the one entry whose digest is or begins with `digest`
  // ("sha256:<hex>", at least 12 hex digits, as `preflight cache list` prints it).
  Result<std::string> find_entry(std::string_view digest) const;

 private:
  void remove_abandoned_temporaries() const;
  // A shared hold on the entry, or nothing when it is not (or no longer) in the cache.
  std::shared_ptr<const UniqueFd> hold(const std::string& digest) const;
  EntryCheck check_entry(int cache_fd, const std::string& name) const;
  // The held entry of `digest`, its sealed folders read (or recorded, when missing).
  HeldRoot held_root(const std::string& digest, std::shared_ptr<const UniqueFd> hold) const;

  std::filesystem::path dir_;  // <cache>/rootfs
};

// Waits for this process's turn at `lock_file` (<cache>/locks/...), an exclusive flock held
// while the returned descriptor lives; says `waiting` when another process holds it. A holder
// that was killed lets it go at once.
Result<UniqueFd> take_turn(const std::filesystem::path& lock_file, const std::string& waiting,
                           const ProgressSink& progress);

// $PREFLIGHT_CACHE_LIMIT, or kDefaultCacheLimit; a malformed value is an error.
Result<std::uint64_t> cache_limit();
// The bounds of an unpack (and of the walk that verifies it): $PREFLIGHT_IMAGE_LIMIT, or
// UnpackLimits' defaults; a malformed value is an error.
Result<UnpackLimits> unpack_limits();

// Whether `image`'s root is the entry of its digest in the cache at `cache_dir`: then its files
// are the digest's, and what is derived from them can be kept by digest (the code scans, the
// harness's bytecode). A rootfs: folder can change under its name.
bool kept_by_digest(const UnpackedImage& image, const std::filesystem::path& cache_dir);

}  // namespace preflight::image
