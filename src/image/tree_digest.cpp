#include "image/tree_digest.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "util/sha256.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::image {
namespace fs = std::filesystem;

namespace {

// Reads the tree's files below one anchor, within one byte bound for all of them.
class TreeReader {
 public:
  TreeReader(int anchor, std::uint64_t max_bytes) : anchor_(anchor), left_(max_bytes), buffer_(1 << 18) {}

  // The SHA-256 of the regular file `relative`, opened without following a link.
  Result<std::string> contents(const std::string& relative) {
    auto file = open_below(anchor_, relative, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, Links::None);
    if (!file) return std::move(file).error();
    struct stat st {};
    if (::fstat(file->get(), &st) != 0 || !S_ISREG(st.st_mode))
      return Error::runtime(relative + " changed while it was read");
    Sha256 sha;
    for (;;) {
      const ssize_t n = ::read(file->get(), buffer_.data(), buffer_.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Error::runtime(fmt::format("cannot read {}: {}", relative, std::strerror(errno)));
      if (n == 0) return sha.hex();
      if (static_cast<std::uint64_t>(n) > left_)
        return Error::runtime("more than the bound of bytes to read");
      left_ -= static_cast<std::uint64_t>(n);
      sha.update(buffer_.data(), static_cast<std::size_t>(n));
    }
  }

  // The target of the symbolic link `relative`, read from the link itself.
  Result<std::string> link_target(const std::string& relative) {
    auto link = open_below(anchor_, relative, O_PATH | O_NOFOLLOW, Links::None);
    if (!link) return std::move(link).error();
    char target[PATH_MAX];
    const ssize_t n = ::readlinkat(link->get(), "", target, sizeof target);
    if (n < 0)
      return Error::runtime(fmt::format("cannot read the link {}: {}", relative, std::strerror(errno)));
    return std::string(target, static_cast<std::size_t>(n));
  }

 private:
  int anchor_;
  std::uint64_t left_;
  std::vector<char> buffer_;
};

// One entry as the digest covers it; never holds a NUL, which separates the records.
Result<std::string> describe(TreeReader& reader, const std::string& relative, const struct stat& st) {
  std::string record = fmt::format("{:o} {}:{} {}.{:09}", st.st_mode, st.st_uid, st.st_gid, st.st_mtim.tv_sec,
                                   st.st_mtim.tv_nsec);
  if (S_ISREG(st.st_mode)) {
    auto sha = reader.contents(relative);
    if (!sha) return std::move(sha).error();
    record += fmt::format(" {} {}", st.st_size, *sha);
  } else if (S_ISLNK(st.st_mode)) {
    auto target = reader.link_target(relative);
    if (!target) return std::move(target).error();
    record += " -> " + *target;
  } else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
    record += fmt::format(" {},{}", major(st.st_rdev), minor(st.st_rdev));
  }
  return record;
}

}  // namespace

Result<TreeDigest> tree_digest(const fs::path& root, const UnpackLimits& limits) {
  auto anchor = open_folder(root);
  if (!anchor) return std::move(anchor).error();
  TreeReader reader(anchor->get(), limits.max_bytes);
  std::vector<std::pair<std::string, std::string>> records;  // path, record
  std::optional<Error> failure;
  TreeDigest result;
  const bool whole =
      walk_job_tree(root, limits.max_entries, [&](const std::string& relative, const struct stat& st) {
        if (failure) return;
        auto record = describe(reader, relative, st);
        if (!record) {
          failure = std::move(record).error();
          return;
        }
        if (S_ISREG(st.st_mode)) result.bytes += static_cast<std::uint64_t>(st.st_size);
        records.emplace_back(relative, std::move(*record));
      });
  if (failure) return failure->context(root.string());
  if (!whole) {
    return Error::runtime(
        fmt::format("{}: cannot be read whole (more than {} files, folders and links, deeper "
                    "than {} folders, or a folder that does not open)",
                    root.string(), limits.max_entries, kMaxWalkDepth));
  }
  std::sort(records.begin(), records.end());
  Sha256 sha;
  for (const auto& [path, record] : records) {
    sha.update(path.data(), path.size() + 1);  // with its NUL: a path never holds one
    sha.update(record.data(), record.size() + 1);
  }
  result.digest = "sha256:" + sha.hex();
  result.files = records.size();
  return result;
}

}  // namespace preflight::image
