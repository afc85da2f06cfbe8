// Applies image layers, in order, onto a fresh root folder with libarchive: OCI whiteouts,
// hard links, symlinks, owners, modes and times. Refuses any entry that would land outside
// the root (an absolute path, a ".." component, or a parent that is a symlink pointing out
// of the root, even one planted by an earlier layer). See docs/images.md "Security".
#pragma once

#include <filesystem>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "image/image_source.hpp"
#include "util/error.hpp"

struct archive;  // libarchive

namespace preflight::image {

class LayerUnpacker {
 public:
  // `root` must exist and be empty: the unpacker knows every symlink under it because it
  // made them all, which is what makes its escape checks cheap.
  explicit LayerUnpacker(std::filesystem::path root);

  // A corrupt archive or an escaping entry is a bad_input error naming the archive, layer
  // and entry; the caller removes the partial root.
  Status apply(const LayerSource& layer);

 private:
  Status apply_entries(::archive* reader, const LayerSource& layer);
  // `rel` with every symlinked component followed (the last too when `follow_last`); an
  // error message (empty on success) when a symlink leads out of the root.
  std::string resolve(const std::string& rel, bool follow_last, std::string& resolved);
  Status remove_path(const std::string& rel);
  void clear_opaque(const std::string& dir);
  void forget_symlinks_under(const std::string& rel);

  std::filesystem::path root_;
  std::string root_prefix_;                                // root_ + "/"
  std::unordered_map<std::string, std::string> symlinks_;  // relative path → target
  std::unordered_set<std::string> layer_paths_;            // written by the current layer
  std::string last_dir_, last_dir_resolved_;               // resolve() cache for siblings
};

// "a/./b//c/" → "a/b/c"; an error message (empty on success) for absolute paths and "..".
std::string normalize_entry_path(const std::string& raw, std::string& out);

}  // namespace preflight::image
