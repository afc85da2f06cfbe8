// The digest-keyed cache of unpacked root filesystems:
//   <cache>/rootfs/sha256-<hex>/{rootfs/, config.json, size, lock, complete}
// An entry appears by an atomic rename of a finished temporary folder, so a present entry
// is always whole; a failed unpack leaves nothing behind. Each use holds the entry (a shared
// flock on `lock`, whose time is the last use) so that pruning, least recently used first,
// never takes an image from under a run; the cache is kept under a size bound
// ($PREFLIGHT_CACHE_LIMIT, docs/images.md "The cache").
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "image/image_source.hpp"
#include "image/image_store.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::image {

// The environment variable that bounds the unpacked images' total size ("100Gi").
inline constexpr const char* kCacheLimitVariable = "PREFLIGHT_CACHE_LIMIT";
inline constexpr std::uint64_t kDefaultCacheLimit = 50ull << 30;

// An entry of the cache, as listed or pruned.
struct CacheEntry {
  std::string digest;  // "sha256:<hex>"
  std::filesystem::path dir;
  std::uint64_t bytes = 0;  // its files' sizes as unpacked
  std::filesystem::file_time_type used;
  bool in_use = false;  // held by a run of this or another process
};

class RootfsCache {
 public:
  explicit RootfsCache(const std::filesystem::path& cache_dir);

  // The entry's folder for a "sha256:<hex>" digest.
  std::filesystem::path entry_dir(const std::string& digest) const;
  bool contains(const std::string& digest) const;

  // Unpacks the source's layers into a new entry unless one exists, then holds it and keeps
  // the cache under its bound; returns the rootfs path and the hold (UnpackedImage::hold).
  Result<std::pair<std::filesystem::path, std::shared_ptr<const UniqueFd>>> unpack(
      const ImageSource& source, const std::string& ref_text, const ProgressSink& progress);

  // Every whole entry, least recently used first.
  std::vector<CacheEntry> entries() const;
  // Removes entries no run holds, least recently used first, until those left take at most
  // `keep_bytes`; returns the removed ones.
  std::vector<CacheEntry> prune(std::uint64_t keep_bytes) const;

 private:
  void remove_abandoned_temporaries() const;
  // A shared hold on the entry, or nothing when it is not (or no longer) in the cache.
  std::shared_ptr<const UniqueFd> hold(const std::string& digest) const;

  std::filesystem::path dir_;  // <cache>/rootfs
};

// $PREFLIGHT_CACHE_LIMIT, or kDefaultCacheLimit; a malformed value is an error.
Result<std::uint64_t> cache_limit();

}  // namespace preflight::image
