#include "util/untrusted_fs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/text.hpp"

namespace preflight {
namespace fs = std::filesystem;

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

// (glibc 2.36 declares pidfd_open without C linkage: the system call itself.)
UniqueFd open_pidfd(int pid) { return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))); }

namespace {

int openat2(int dir, const char* path, int flags, std::uint64_t resolve) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
  how.resolve = resolve;
  for (;;) {
    int fd = static_cast<int>(::syscall(SYS_openat2, dir, path, &how, sizeof how));
    if (fd >= 0 || errno != EAGAIN) return fd;  // EAGAIN: a rename raced the lookup; retry
  }
}

std::string why(int error) {
  switch (error) {
    case ELOOP:
      return "a symbolic link is in the way";
    case EXDEV:
      return "it leads out of its folder";
    case ENOSYS:
      return "the kernel has no openat2 (Linux 5.6 or later is needed)";
    default:
      return std::strerror(error);
  }
}

}  // namespace

Result<UniqueFd> open_below(int dir, const std::string& path, int flags, Links links) {
  const std::uint64_t resolve = links == Links::InRoot
                                    ? RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS
                                    : RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const std::string relative = path.empty() ? "." : path;
  int fd = openat2(dir, relative.c_str(), flags, resolve);
  if (fd < 0) return Error::runtime(fmt::format("cannot open {}: {}", path, why(errno)));
  return UniqueFd(fd);
}

bool write_file_whole(const fs::path& partial, const fs::path& file, std::string_view text, mode_t mode) {
  UniqueFd out(::open(partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!out.valid()) return false;
  bool written = true;
  for (std::size_t done = 0; written && done < text.size();) {
    const ssize_t wrote = ::write(out.get(), text.data() + done, text.size() - done);
    written = wrote > 0 || (wrote < 0 && errno == EINTR);
    done += wrote > 0 ? static_cast<std::size_t>(wrote) : 0;
  }
  out = UniqueFd();
  if (written && ::rename(partial.c_str(), file.c_str()) == 0) return true;
  ::unlink(partial.c_str());
  return false;
}

Result<UniqueFd> open_folder(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Error::runtime(fmt::format("cannot open {}: {}", dir.string(), std::strerror(errno)));
  return UniqueFd(fd);
}

Status make_folder_in_root(int root, const std::string& path, unsigned uid, unsigned gid, bool own_existing) {
  // One component at a time, each resolved in the root: a link in the image may point
  // anywhere in the image, never out of it.
  UniqueFd parent;
  std::string so_far;
  bool made = false;
  for (const auto& part : fs::path(path).relative_path()) {
    if (part.empty() || part == ".") continue;
    so_far += "/" + part.string();
    auto next = open_below(root, so_far, O_PATH | O_DIRECTORY, Links::InRoot);
    made = !next && ::mkdirat(parent.valid() ? parent.get() : root, part.c_str(), 0755) == 0;
    if (made) next = open_below(root, so_far, O_PATH | O_DIRECTORY, Links::InRoot);
    if (!next)
      return Error::runtime(fmt::format("cannot make {} in the container: {}", path, next.error().message));
    parent = std::move(*next);
  }
  if (!parent.valid() || !(made || own_existing)) return Ok{};
  // An O_PATH descriptor changes owner through AT_EMPTY_PATH: never by a name, which a link could redirect.
  if (::fchownat(parent.get(), "", uid, gid, AT_EMPTY_PATH) != 0)
    return Error::runtime(fmt::format("cannot give {} to the job's user: {}", path, std::strerror(errno)));
  return Ok{};
}

Result<std::string> read_regular(int fd, std::size_t max_bytes, const std::string& name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return Error::runtime(fmt::format("cannot read {}: {}", name, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return Error::runtime(fmt::format("{} is not a regular file", name));
  std::string text;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::runtime(fmt::format("cannot read {}: {}", name, std::strerror(errno)));
    if (n == 0) return text;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes)
      return Error::runtime(fmt::format("{} is larger than {}", name, human_size(max_bytes)));
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

Result<std::string> read_regular_file(const fs::path& path, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO returns at once (and read_regular refuses it).
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Error::runtime(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  UniqueFd file(fd);
  return read_regular(file.get(), max_bytes, path.string());
}

std::optional<std::string> read_code_file(const fs::path& dir, const fs::path& relative,
                                          std::size_t max_bytes) {
  auto folder = open_folder(dir);
  if (!folder) return std::nullopt;
  auto file = open_below(folder->get(), relative.string(), O_RDONLY | O_NONBLOCK | O_NOCTTY, Links::InRoot);
  if (!file) return std::nullopt;
  auto text = read_regular(file->get(), max_bytes, (dir / relative).string());
  if (!text) return std::nullopt;
  return std::move(*text);
}

Result<UniqueFd> open_job_file(const fs::path& dir, const std::string& name) {
  auto folder = open_folder(dir);
  if (!folder) return std::move(folder).error();
  auto file = open_below(folder->get(), name, O_RDONLY | O_NONBLOCK | O_NOCTTY, Links::None);
  if (!file) return std::move(file).error();
  struct stat st {};
  if (::fstat(file->get(), &st) != 0 || !S_ISREG(st.st_mode))
    return Error::runtime(fmt::format("{} is not a regular file", (dir / name).string()));
  return file;
}

Result<std::string> read_job_file(const fs::path& dir, const std::string& name, std::size_t max_bytes) {
  auto file = open_job_file(dir, name);
  if (!file) return std::move(file).error();
  return read_regular(file->get(), max_bytes, (dir / name).string());
}

std::vector<std::string> job_folder_names(const fs::path& dir, const std::string& relative,
                                          std::size_t max_names) {
  std::vector<std::string> names;
  auto root = open_folder(dir);
  if (!root) return names;
  auto folder =
      open_below(root->get(), relative.empty() ? "." : relative, O_RDONLY | O_DIRECTORY, Links::None);
  if (!folder) return names;
  const int fd = ::dup(folder->get());
  DIR* listing = fd < 0 ? nullptr : ::fdopendir(fd);
  if (listing == nullptr) {
    if (fd >= 0) ::close(fd);
    return names;
  }
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (names.size() >= max_names) break;
    names.emplace_back(name);
  }
  ::closedir(listing);
  return names;
}

namespace {

// A visit that also gets the entry's folder, open, and its name there: for changing it.
using EntryVisitor =
    std::function<void(int dir, const char* name, const std::string& relative, const struct stat& st)>;

struct Walk {
  dev_t device;
  std::uint64_t entries_left;
  const EntryVisitor& visit;
  bool whole = true;
};

// Walks the folder open at `fd` (taken over), whose entries are named `prefix` + name.
void walk_folder(int fd, const std::string& prefix, int depth, Walk& walk) {
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    walk.whole = false;
    return;
  }
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (walk.entries_left == 0) {
      walk.whole = false;
      break;
    }
    --walk.entries_left;
    struct stat st {};
    if (::fstatat(::dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    const std::string relative = prefix + std::string(name);
    walk.visit(::dirfd(dir), entry->d_name, relative, st);
    if (!S_ISDIR(st.st_mode) || st.st_dev != walk.device) continue;
    if (depth + 1 >= kMaxWalkDepth) {
      walk.whole = false;
      continue;
    }
    const int child = ::openat(::dirfd(dir), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (child < 0) continue;  // replaced by a link or removed since the fstatat
    walk_folder(child, relative + "/", depth + 1, walk);
  }
  ::closedir(dir);
}

bool walk_entries(const fs::path& dir, std::uint64_t max_entries, const EntryVisitor& visit) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  if (fd < 0) return false;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return false;
  }
  Walk walk{st.st_dev, max_entries, visit};
  walk_folder(fd, "", 0, walk);
  return walk.whole;
}

// Clears the set-user-ID and set-group-ID bits of the file or folder `name` in `dir`, and a
// file's sticky bit, through a descriptor of it; true when there were any. Opened without
// following a link and without blocking, and changed only when it is still what was walked.
bool clear_special_bits(int dir, const char* name, const struct stat& walked) {
  const bool folder = S_ISDIR(walked.st_mode);
  const mode_t cleared = S_ISUID | S_ISGID | (folder ? 0 : S_ISVTX);
  if ((walked.st_mode & cleared) == 0) return false;
  const int kind = folder ? O_DIRECTORY : O_NONBLOCK | O_NOCTTY;
  const UniqueFd fd(::openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | kind));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || st.st_ino != walked.st_ino ||
      (st.st_mode & S_IFMT) != (walked.st_mode & S_IFMT))
    return false;
  return ::fchmod(fd.get(), st.st_mode & 07777 & ~cleared) == 0;
}

}  // namespace

bool walk_job_tree(const fs::path& dir, std::uint64_t max_entries, const TreeVisitor& visit) {
  return walk_entries(
      dir, max_entries,
      [&](int, const char*, const std::string& relative, const struct stat& st) { visit(relative, st); });
}

Disarmed disarm_job_tree(const fs::path& dir, std::uint64_t max_entries) {
  Disarmed disarmed;
  disarmed.whole = walk_entries(
      dir, max_entries, [&](int at, const char* name, const std::string&, const struct stat& st) {
        if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
          if (::unlinkat(at, name, 0) == 0) ++disarmed.removed;
        } else if (!S_ISLNK(st.st_mode) && clear_special_bits(at, name, st)) {
          ++disarmed.modes;
        }
      });
  return disarmed;
}

}  // namespace preflight
