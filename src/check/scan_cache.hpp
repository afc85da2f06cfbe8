// Code scans kept for the next command (<cache>/scans/<key>.json), so that a warm `preflight
// run` or `check` starts no container to read code it has read before. The key is everything a
// scan depends on (emulator/check/scan.py sees nothing but its request): the scanner's text, the
// image by digest and its interpreter's path, and the request itself, every file's path and
// text, the entry script and its arguments. A changed byte of any of them is another key, so a
// kept scan is never stale. Only images of the digest-keyed cache have one: their roots are the
// digest's files; a rootfs: folder can change under its identity (docs/static-checks.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "image/image_store.hpp"

namespace preflight::check {

class ScanCache {
 public:
  // The most scans kept, and their most bytes together: the least recently used go first.
  static constexpr std::size_t kKeptScans = 256;
  static constexpr std::uint64_t kKeptBytes = 64ull << 20;
  // A scanner's output larger than this is not kept (a repository of generated code).
  static constexpr std::size_t kMaxScanBytes = 16u << 20;

  // The cache in `cache_dir` for scans in `image`; nullopt when the image's root is not the
  // digest's entry of the cache (a rootfs: folder): its scans always run.
  static std::optional<ScanCache> of_image(const image::UnpackedImage& image,
                                           const std::filesystem::path& cache_dir);

  ScanCache(std::filesystem::path dir, std::string image_digest, std::size_t kept_scans = kKeptScans)
      : dir_(std::move(dir)), image_digest_(std::move(image_digest)), kept_scans_(kept_scans) {}

  // The key of a scan by `program` in this image's `interpreter` of the request `input`.
  std::string key(const std::string& program, const std::string& interpreter, const std::string& input) const;

  // The scanner's output kept under `key`, marked as just used; nullopt when none is kept, or
  // what is there is not a regular file of at most kMaxScanBytes (no link is followed) that this
  // user owns and no one else may write.
  std::optional<std::string> find(const std::string& key) const;

  // Keeps `output` under `key` (written aside, mode 0600, then renamed into place), then drops the least
  // recently used scans past the bounds. Best effort: a cache that cannot be written costs the
  // next command a scan, nothing else.
  void store(const std::string& key, const std::string& output) const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  void keep_within_bounds() const;

  std::filesystem::path dir_;
  std::string image_digest_;
  std::size_t kept_scans_;
};

}  // namespace preflight::check
