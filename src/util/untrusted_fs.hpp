// File operations on trees Preflight does not trust (docs/security.md): an image's root file
// system, a folder the job may write, a file named by a job or a profile. Nothing here
// follows a symbolic link out of its tree onto the host, blocks on a FIFO or a device, or
// reads without a bound.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"
#include "util/text.hpp"

namespace preflight {

// An open file descriptor, closed when it goes out of scope.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// A descriptor of the process `pid` (pidfd_open(2)), readable when it exits: for poll(2)
// beside pipes. Invalid, with errno set, when the process cannot be opened.
UniqueFd open_pidfd(int pid);

// How a path below a folder resolves.
enum class Links {
  InRoot,  // symbolic links are followed as if the folder were "/": an image's root
  None,    // no symbolic link anywhere in the path: a folder the job writes
};

// Opens `path` (absolute or relative, read as below `dir`) with open(2) `flags`, resolving
// within `dir` (openat2 with RESOLVE_IN_ROOT or RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH): no
// component, link or ".." leads out of it. O_CLOEXEC is always added.
Result<UniqueFd> open_below(int dir, const std::string& path, int flags, Links links);

// Opens a folder of the host that Preflight itself names (a run folder, a cached image root),
// as the anchor for open_below.
Result<UniqueFd> open_folder(const std::filesystem::path& dir);

// Makes the folder `path` in the root `root` (Links::InRoot) with its missing parents (mode
// 0755) and gives it to uid:gid when it was made or when `own_existing`. Errors name `path`.
Status make_folder_in_root(int root, const std::string& path, unsigned uid, unsigned gid, bool own_existing);

// The whole content of the regular file open at `fd`, of at most `max_bytes`; an error for
// anything else (a FIFO, a device, a folder, a longer file). `name` is for messages.
Result<std::string> read_regular(int fd, std::size_t max_bytes, const std::string& name);

// Writes `text` to `file` whole or not at all: into `partial`, a name of this writer's own in
// the same folder (made new, O_EXCL, with `mode`, no link followed), then renamed into place,
// so that a reader never sees half a file and two writers of one file each leave a whole one.
// False, and no partial file left, when it could not.
bool write_file_whole(const std::filesystem::path& partial, const std::filesystem::path& file,
                      std::string_view text, mode_t mode = 0644);

// The regular file `path` (links followed as the user's own paths are), read with a bound.
Result<std::string> read_regular_file(const std::filesystem::path& path, std::size_t max_bytes);

// The regular file `relative` of the job's code folder `dir`, resolved in it as in a root
// (Links::InRoot), of at most `max_bytes` (kMaxReadBytes): a link or ".." of the job's code
// never reads a host file. Nullopt for anything else.
std::optional<std::string> read_code_file(const std::filesystem::path& dir,
                                          const std::filesystem::path& relative,
                                          std::size_t max_bytes = kMaxReadBytes);

// Opens the regular file `name` in the folder `dir` that the job may write, for reading: no
// link is followed, a FIFO, a device or a folder is refused.
Result<UniqueFd> open_job_file(const std::filesystem::path& dir, const std::string& name);

// The regular file `name` in the folder `dir` that the job may write, as open_job_file opens it.
Result<std::string> read_job_file(const std::filesystem::path& dir, const std::string& name,
                                  std::size_t max_bytes);

// The names in the folder `relative` below `dir`, a folder the job may write, opened as
// open_below opens it with Links::None; at most `max_names` of them, in no order. Empty when it
// cannot be opened.
std::vector<std::string> job_folder_names(const std::filesystem::path& dir, const std::string& relative,
                                          std::size_t max_names);

// Called for each entry of a walk: its path relative to the walked folder ("ckpt/last.pt")
// and its lstat.
using TreeVisitor = std::function<void(const std::string& relative, const struct stat& st)>;

// The deepest a walk goes: each level holds a descriptor open.
inline constexpr int kMaxWalkDepth = 128;

// Visits every entry below `dir`, a folder the job may have written, depth first: each folder
// opened below its parent without following a link (O_NOFOLLOW), none on another file system,
// at most `max_entries` entries and kMaxWalkDepth levels. False when a bound cut it short or
// `dir` could not be opened.
bool walk_job_tree(const std::filesystem::path& dir, std::uint64_t max_entries, const TreeVisitor& visit);

// What disarm_job_tree did.
struct Disarmed {
  std::uint64_t modes = 0;    // files and folders whose set-user-ID, set-group-ID or sticky bits went
  std::uint64_t removed = 0;  // device nodes, FIFOs and sockets removed
  bool whole = true;          // false: a bound cut the walk short; what lies past it was not looked at
};

// Makes the tree below `dir`, which a job wrote, safe to keep on the host (docs/security.md):
// files and folders lose their set-user-ID and set-group-ID bits, files their sticky bit,
// and device nodes, FIFOs and sockets are removed. Walked as walk_job_tree walks; each entry
// is changed through a descriptor of its own, opened without following a link.
Disarmed disarm_job_tree(const std::filesystem::path& dir, std::uint64_t max_entries);

}  // namespace preflight
