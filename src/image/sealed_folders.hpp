// The sealed folders of an unpacked root filesystem: folders one or two levels below its root
// in which a job's user other than root can change nothing by permissions alone. Everything in
// one belongs to root; no file, folder or other entry grants group or world write (an ACL's
// named entries are bounded by its mask, which is the mode's group bits); there is no device
// node. A run may bind such a folder into the container's root in place of the overlay, since
// a write there meets the same EACCES either way (docs/security.md "Sealed folders").
// Recorded with each cache entry (<entry>/sealed) and checked by `preflight cache verify`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace preflight::image {

struct SealedFolder {
  std::string path;           // relative to the root: "usr", "usr/lib"
  std::uint64_t entries = 0;  // the files, folders and links below it

  bool operator==(const SealedFolder&) const = default;
};

// Every sealed folder one or two levels below `root`, in path order (a sealed folder's folders
// are sealed too: a run that cannot bind it may bind them). Symbolic links are neither followed
// nor listed. An error when the walk passes `max_entries` (UnpackLimits) or a folder does not open.
Result<std::vector<SealedFolder>> sealed_folders(const std::filesystem::path& root,
                                                 std::uint64_t max_entries);

// The most of a record read back: a line for each of a few hundred folders at most.
inline constexpr std::size_t kMaxSealedRecordBytes = 1 << 20;

// The record's text: "ENTRIES PATH" a line.
std::string format_sealed(const std::vector<SealedFolder>& folders);

// A record read back; nullopt for a malformed one (a path of more than two components, "." or
// "..", an empty name, a count that is not a number), which a run treats as no record at all.
std::optional<std::vector<SealedFolder>> parse_sealed(std::string_view text);

}  // namespace preflight::image
