// Applies image layers, in order, onto a fresh root folder with libarchive: OCI whiteouts,
// hard links, symlinks, owners, modes and times. Refuses any entry that would land outside
// the root (an absolute path, a ".." component, or a parent that is a symlink pointing out
// of the root, even one planted by an earlier layer). See docs/images.md "Security".
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "image/image_source.hpp"
#include "util/error.hpp"

struct archive;  // libarchive
struct archive_entry;

namespace preflight::image {

// What one image may unpack to, all its layers together: a layer of a few MB can expand to
// any size (docs/images.md "Security"). Training images are rarely over 30 GiB.
struct UnpackLimits {
  std::uint64_t max_bytes = 64ull << 30;   // the sizes of its files; $PREFLIGHT_IMAGE_LIMIT
  std::uint64_t max_entries = 10'000'000;  // files, folders and links
};

// The environment variable that sets UnpackLimits::max_bytes ("128Gi").
inline constexpr const char* kUnpackLimitVariable = "PREFLIGHT_IMAGE_LIMIT";

// libarchive's message for the last error of `a`; it may have none (a null string), and a
// corrupt archive must still give a message rather than a crash.
std::string archive_message(::archive* a);

class LayerUnpacker {
 public:
  // `root` must exist and be empty: the unpacker knows every symlink under it because it
  // made them all, which is what makes its escape checks cheap.
  LayerUnpacker(std::filesystem::path root, UnpackLimits limits);

  // A corrupt archive or an escaping entry is a bad_input error naming the archive, layer
  // and entry; the caller removes the partial root.
  Status apply(const LayerSource& layer);

  // The sizes of the files unpacked so far, as their headers declare them.
  std::uint64_t bytes() const { return bytes_; }

 private:
  Status apply_entries(::archive* reader, const LayerSource& layer);
  // One entry of a layer: checked, then a whiteout applied, or a file, folder or link written.
  Status apply_entry(::archive* reader, ::archive* writer, ::archive_entry* entry, const std::string& where);
  // resolve() of an entry's folder, the last one remembered (entries come folder by folder).
  std::string resolve_parent(const std::string& dir, std::string& parent);
  // ".wh.NAME" removes NAME of the layers below; ".wh..wh..opq" empties the folder.
  Status apply_whiteout(const std::string& parent, std::string_view base);
  // Points a hard link's target into the root (resolved as the image sees it); an error
  // message when it leads out. A link to a symlink is a symlink too.
  std::string redirect_hard_link(::archive_entry* entry, const std::string& link_raw,
                                 const std::string& target);
  // A symlink in the way is replaced, never written through; a new one is remembered.
  void track_symlink(::archive_entry* entry, const std::string& target);
  // Writes the entry at `full` (the fast path for regular files, else libarchive's).
  Status write_entry(::archive* reader, ::archive* writer, ::archive_entry* entry, const std::string& full,
                     const std::string& raw, const std::string& where);
  // `rel` with every symlinked component followed (the last too when `follow_last`); an
  // error message (empty on success) when a symlink leads out of the root.
  std::string resolve(const std::string& rel, bool follow_last, std::string& resolved);
  Status remove_path(const std::string& rel);
  void clear_opaque(const std::string& dir);
  void forget_symlinks_under(const std::string& rel);

  // A bad_input error when this entry takes the image past its limits.
  Status count(::archive_entry* entry, const std::string& where);

  std::filesystem::path root_;
  UnpackLimits limits_;
  std::uint64_t bytes_ = 0, entries_ = 0;
  std::string root_prefix_;                                // root_ + "/"
  std::unordered_map<std::string, std::string> symlinks_;  // relative path → target
  std::unordered_set<std::string> layer_paths_;            // written by the current layer
  std::string last_dir_, last_dir_resolved_;               // resolve() cache for siblings
  bool as_root_ = false;                                   // owners are set (root on the host)
};

// "a/./b//c/" → "a/b/c"; an error message (empty on success) for absolute paths and "..".
std::string normalize_entry_path(const std::string& raw, std::string& out);

}  // namespace preflight::image
