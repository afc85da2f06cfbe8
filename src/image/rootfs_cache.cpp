#include "image/rootfs_cache.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "image/digest.hpp"
#include "image/layer_unpacker.hpp"
#include "util/units.hpp"

namespace preflight::image {
namespace fs = std::filesystem;

namespace {

constexpr const char* kCompleteMarker = "complete";
constexpr std::string_view kTempPrefix = ".tmp-";

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

Result<UnpackLimits> unpack_limits() {
  UnpackLimits limits;
  const char* text = std::getenv(kUnpackLimitVariable);
  if (text == nullptr || *text == '\0') return limits;
  auto bytes = parse_size(text);
  if (!bytes || *bytes == 0)
    return Error::bad_input(std::string(kUnpackLimitVariable) + ": expected a size such as \"128Gi\", got \"" +
                            text + "\"");
  limits.max_bytes = *bytes;
  return limits;
}

}  // namespace

RootfsCache::RootfsCache(fs::path cache_dir) : dir_(std::move(cache_dir) / "rootfs") {}

fs::path RootfsCache::entry_dir(const std::string& digest) const {
  return dir_ / ("sha256-" + digest_hex(digest));
}

bool RootfsCache::contains(const std::string& digest) const {
  std::error_code ec;
  return fs::exists(entry_dir(digest) / kCompleteMarker, ec);
}

// A temporary folder whose process is gone was left by a killed run.
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

Result<fs::path> RootfsCache::unpack(const ImageSource& source, const std::string& ref_text,
                                     const ProgressSink& progress) {
  fs::path final_dir = entry_dir(source.digest);
  if (contains(source.digest)) return final_dir / "rootfs";

  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Error::runtime(dir_.string() + ": cannot create the image cache: " + ec.message());
  remove_abandoned_temporaries();

  std::string hex = digest_hex(source.digest);
  TempFolder temp(dir_ / (std::string(kTempPrefix) + hex.substr(0, 12) + "-" + std::to_string(::getpid())));
  fs::remove_all(temp.path(), ec);
  fs::create_directories(temp.path() / "rootfs", ec);
  if (ec) return Error::runtime(temp.path().string() + ": cannot create: " + ec.message());

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
    std::ofstream marker(temp.path() / kCompleteMarker);
    marker << source.digest << "\n";
    if (!config || !marker)
      return Error::runtime(temp.path().string() + ": cannot write the cache entry's metadata");
  }
  if (::rename(temp.path().c_str(), final_dir.c_str()) != 0) {
    // Another run finished the same image first: use its copy, drop ours.
    if (contains(source.digest)) return final_dir / "rootfs";
    return Error::runtime(final_dir.string() +
                          ": cannot move the unpacked image into the cache: " + std::strerror(errno));
  }
  temp.release();
  if (progress) {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    char line[64];
    std::snprintf(line, sizeof line, "unpacked in %.1f s", seconds);
    progress(line);
  }
  return final_dir / "rootfs";
}

}  // namespace preflight::image
