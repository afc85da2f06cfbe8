#include "check/scan_cache.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string_view>
#include <vector>

#include "image/digest.hpp"
#include "image/rootfs_cache.hpp"
#include "util/sha256.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::check {
namespace fs = std::filesystem;

namespace {

// Changed when what a key stands for changes (the scanner's flags, the request's form).
constexpr std::string_view kScanKeyVersion = "preflight code scan 1: python -I -B -S -c PROGRAM < INPUT";
constexpr std::string_view kScanSuffix = ".json";
// A partial file this old was left by a process that died while writing it.
constexpr auto kAbandonedPartialAge = std::chrono::hours(1);

bool is_scan_key(std::string_view key) {
  return key.size() == 64 && key.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

struct KeptScan {
  fs::path path;
  fs::file_time_type used;
  std::uintmax_t bytes = 0;
};

}  // namespace

std::optional<ScanCache> ScanCache::of_image(const image::UnpackedImage& image, const fs::path& cache_dir) {
  if (!image::kept_by_digest(image, cache_dir)) return std::nullopt;
  return ScanCache(cache_dir / "scans", image.digest);
}

std::string ScanCache::key(const std::string& program, const std::string& interpreter,
                           const std::string& input) const {
  Sha256 hash;
  for (std::string_view field :
       {kScanKeyVersion, std::string_view(image_digest_), std::string_view(interpreter),
        std::string_view(program), std::string_view(input)})
    hash.update_field(field);
  return hash.hex();
}

std::optional<std::string> ScanCache::find(const std::string& key) const {
  if (!is_scan_key(key)) return std::nullopt;
  auto file = open_job_file(dir_, key + std::string(kScanSuffix));  // never through a link
  if (!file) return std::nullopt;
  // Only a scan this user wrote, which no one else may change: in a cache shared between users
  // (docs/scale-out.md), another one's entry could stand for code it never scanned.
  struct stat info {};
  if (::fstat(file->get(), &info) != 0 || info.st_uid != ::geteuid() || (info.st_mode & (S_IWGRP | S_IWOTH)))
    return std::nullopt;
  auto text = read_regular(file->get(), kMaxScanBytes, (dir_ / key).string());
  if (!text) return std::nullopt;
  ::futimens(file->get(), nullptr);  // the last use, for keep_within_bounds
  return std::move(*text);
}

void ScanCache::store(const std::string& key, const std::string& output) const {
  if (!is_scan_key(key) || output.size() > kMaxScanBytes) return;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return;
  // Each writer has a partial file of its own, renamed into place whole: a reader never sees
  // half a scan, and two commands storing one key at once both leave a whole one.
  const fs::path partial = dir_ / fmt::format(".{}.{:08x}", key, std::random_device()());
  // The user's own, as a run folder is: a scan tells the code's paths and variables.
  if (!write_file_whole(partial, dir_ / (key + std::string(kScanSuffix)), output, 0600)) return;
  keep_within_bounds();
}

void ScanCache::keep_within_bounds() const {
  std::vector<KeptScan> kept;
  const auto now = fs::file_time_type::clock::now();
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code stat_ec;
    const auto status = it->symlink_status(stat_ec);
    const auto used = it->last_write_time(stat_ec);
    if (stat_ec) continue;
    if (name.starts_with(".")) {
      if (now - used > kAbandonedPartialAge) fs::remove(it->path(), stat_ec);
      continue;
    }
    if (!name.ends_with(kScanSuffix) || !fs::is_regular_file(status)) continue;
    kept.push_back({it->path(), used, it->file_size(stat_ec)});
  }
  std::sort(kept.begin(), kept.end(), [](const KeptScan& a, const KeptScan& b) { return a.used > b.used; });
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    bytes += kept[i].bytes;
    if (i < kept_scans_ && bytes <= kKeptBytes) continue;
    std::error_code ignored;
    fs::remove(kept[i].path, ignored);
  }
}

}  // namespace preflight::check
