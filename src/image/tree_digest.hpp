// The digest of an unpacked root filesystem's files: recorded when a cache entry is completed
// and recomputed by `preflight cache verify` (docs/images.md "The cache"). It covers each
// entry's path, type, mode, owner, modification time, size, contents, link target and device,
// in path order. The tree is untrusted: no link is followed, and the walk is bounded.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "image/layer_unpacker.hpp"
#include "util/error.hpp"

namespace preflight::image {

struct TreeDigest {
  std::string digest;       // "sha256:<hex>"
  std::uint64_t files = 0;  // files, folders and links
  std::uint64_t bytes = 0;  // the contents read
};

// The digest of the tree below `root` (not counting `root` itself). An error when a bound of
// `limits` is passed, the tree is deeper than kMaxWalkDepth, or a part of it cannot be read.
Result<TreeDigest> tree_digest(const std::filesystem::path& root, const UnpackLimits& limits);

}  // namespace preflight::image
