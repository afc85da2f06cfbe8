// The digest-keyed cache of unpacked root filesystems:
//   <cache>/rootfs/sha256-<hex>/{rootfs/, config.json, complete}
// An entry appears by an atomic rename of a finished temporary folder, so a present entry
// is always whole; a failed unpack leaves nothing behind.
#pragma once

#include <filesystem>
#include <string>

#include "image/image_source.hpp"
#include "image/image_store.hpp"

namespace preflight::image {

class RootfsCache {
 public:
  explicit RootfsCache(std::filesystem::path cache_dir);

  // The entry's folder for a "sha256:<hex>" digest.
  std::filesystem::path entry_dir(const std::string& digest) const;
  bool contains(const std::string& digest) const;

  // Unpacks the source's layers into a new entry unless one exists; returns the rootfs path.
  Result<std::filesystem::path> unpack(const ImageSource& source, const std::string& ref_text,
                                       const ProgressSink& progress);

 private:
  void remove_abandoned_temporaries() const;

  std::filesystem::path dir_;  // <cache>/rootfs
};

}  // namespace preflight::image
