#include "image/layer_unpacker.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "util/host_root.hpp"
#include "util/text.hpp"

namespace preflight::image {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kReadBlock = 1 << 20;  // large reads: the unpack is I/O-bound
constexpr int kMaxSymlinkHops = 40;          // as the kernel's ELOOP limit
constexpr std::string_view kWhiteoutPrefix = ".wh.";
constexpr std::string_view kOpaqueMarker = ".wh..wh..opq";

struct ReadDeleter {
  void operator()(archive* a) const { archive_read_free(a); }
};
struct WriteDeleter {
  void operator()(archive* a) const { archive_write_free(a); }
};
using Reader = std::unique_ptr<archive, ReadDeleter>;

Reader new_layer_reader() {
  Reader a(archive_read_new());
  archive_read_support_format_tar(a.get());
  // Compression is detected by magic bytes: gzip, zstd, or none (also xz/bzip2 for odd images).
  archive_read_support_filter_gzip(a.get());
  archive_read_support_filter_zstd(a.get());
  archive_read_support_filter_xz(a.get());
  archive_read_support_filter_bzip2(a.get());
  archive_read_support_filter_none(a.get());
  return a;
}

// A layer stored as a member of an outer tar (docker save): its bytes are streamed from the
// outer archive straight into the inner reader, never copied to disk.
la_ssize_t read_from_outer(archive* inner, void* client, const void** buffer) {
  auto* outer = static_cast<archive*>(client);
  size_t size = 0;
  la_int64_t offset = 0;
  int r = archive_read_data_block(outer, buffer, &size, &offset);
  if (r == ARCHIVE_EOF) return 0;
  if (r < ARCHIVE_WARN) {
    archive_set_error(inner, archive_errno(outer), "%s", archive_message(outer).c_str());
    return -1;
  }
  return static_cast<la_ssize_t>(size);
}

std::string strip_dot_slash(std::string name) {
  while (name.rfind("./", 0) == 0) name.erase(0, 2);
  return name;
}

// Creates parent folders of `path` (as tar does, mode 0755); the layer's own folder entries
// set their real modes.
void make_parents(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return;
  std::string dir = path.substr(0, slash);
  if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) return;
  if (errno == ENOENT) {
    make_parents(dir);
    ::mkdir(dir.c_str(), 0755);
  }
}

enum class FastWrite { Done, NotHandled, ReadError, WriteError };

// Plain regular files (most of a root filesystem) are written here directly, with the
// syscalls tar makes; libarchive's writer adds several per entry (umask, cloexec, lookups).
// Anything unusual (xattrs, sparse files, an existing folder in the way) goes to libarchive.
FastWrite write_regular_file(archive* reader, archive_entry* entry, const std::string& path, bool as_root,
                             std::string& error) {
  if (archive_entry_xattr_count(entry) > 0 || archive_entry_sparse_count(entry) > 0)
    return FastWrite::NotHandled;
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
  int fd = ::open(path.c_str(), kFlags, 0600);
  if (fd < 0 && errno == ENOENT) {
    make_parents(path);
    fd = ::open(path.c_str(), kFlags, 0600);
  }
  if (fd < 0 && errno == EEXIST && ::unlink(path.c_str()) == 0) fd = ::open(path.c_str(), kFlags, 0600);
  if (fd < 0) return FastWrite::NotHandled;
  const void* block = nullptr;
  size_t size = 0;
  la_int64_t offset = 0;
  la_int64_t position = 0;
  int r = 0;
  while ((r = archive_read_data_block(reader, &block, &size, &offset)) == ARCHIVE_OK) {
    if (offset != position && ::lseek(fd, offset, SEEK_SET) < 0) break;
    const char* data = static_cast<const char*>(block);
    for (size_t done = 0; done < size;) {
      ssize_t wrote = ::write(fd, data + done, size - done);
      if (wrote < 0) {
        if (errno == EINTR) continue;
        error = std::strerror(errno);
        ::close(fd);
        return FastWrite::WriteError;
      }
      done += static_cast<size_t>(wrote);
    }
    position = offset + static_cast<la_int64_t>(size);
  }
  if (r != ARCHIVE_EOF) {
    error = archive_message(reader);
    ::close(fd);
    return FastWrite::ReadError;
  }
  if (position < archive_entry_size(entry)) (void)::ftruncate(fd, archive_entry_size(entry));
  // Owner before mode: chown clears set-user-ID bits.
  if (as_root)
    (void)::fchown(fd, static_cast<uid_t>(archive_entry_uid(entry)),
                   static_cast<gid_t>(archive_entry_gid(entry)));
  (void)::fchmod(fd, archive_entry_perm(entry));
  timespec times[2] = {{archive_entry_atime(entry), archive_entry_atime_nsec(entry)},
                       {archive_entry_mtime(entry), archive_entry_mtime_nsec(entry)}};
  if (!archive_entry_atime_is_set(entry)) times[0] = times[1];
  (void)::futimens(fd, times);
  if (::close(fd) != 0) {
    error = std::strerror(errno);
    return FastWrite::WriteError;
  }
  return FastWrite::Done;
}

}  // namespace

std::string normalize_entry_path(const std::string& raw, std::string& out) {
  out.clear();
  if (!raw.empty() && raw[0] == '/') return "it is an absolute path";
  std::size_t pos = 0;
  while (pos <= raw.size()) {
    std::size_t end = raw.find('/', pos);
    if (end == std::string::npos) end = raw.size();
    std::string_view part(raw.data() + pos, end - pos);
    if (part == "..") return "it has a \"..\" component";
    if (!part.empty() && part != ".") {
      if (!out.empty()) out += '/';
      out.append(part);
    }
    pos = end + 1;
  }
  return {};
}

LayerUnpacker::LayerUnpacker(fs::path root, UnpackLimits limits)
    : root_(std::move(root)), limits_(limits), root_prefix_(root_.string() + "/") {}

Status LayerUnpacker::count(archive_entry* entry, const std::string& where) {
  // The size a header declares, before a byte is written: a sparse or lying entry is counted
  // at its word, so the bound holds whatever the data.
  const la_int64_t size = archive_entry_filetype(entry) == AE_IFREG ? archive_entry_size(entry) : 0;
  bytes_ += size > 0 ? static_cast<std::uint64_t>(size) : 0;
  ++entries_;
  std::string what;
  if (bytes_ > limits_.max_bytes) what = human_size(limits_.max_bytes) + " of files";
  if (entries_ > limits_.max_entries)
    what = std::to_string(limits_.max_entries) + " files, folders and links";
  if (what.empty()) return Ok{};
  return Error::bad_input(
      where + ": the image unpacks to more than " + what +
      " (Preflight's bound on one image), and was refused: an archive that expands this far is "
      "more likely an archive bomb than a training image. If the image really is that large, "
      "raise the bound with " +
      std::string(kUnpackLimitVariable) + "=" + std::to_string(((limits_.max_bytes >> 30) + 1) * 2) + "Gi");
}

std::string LayerUnpacker::resolve(const std::string& rel, bool follow_last, std::string& resolved) {
  resolved.clear();
  if (symlinks_.empty()) {
    resolved = rel;
    return {};
  }
  // Components still to walk, last first; symlink targets are pushed in front of the rest.
  std::vector<std::string> pending;
  for (std::size_t end = rel.size(), pos; end > 0; end = pos) {
    pos = rel.rfind('/', end - 1);
    std::size_t begin = pos == std::string::npos ? 0 : pos + 1;
    pending.emplace_back(rel.substr(begin, end - begin));
    if (pos == std::string::npos) break;
  }
  int hops = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.back());
    pending.pop_back();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (resolved.empty()) return "a symlink on its path leads above the image root";
      auto slash = resolved.rfind('/');
      resolved.resize(slash == std::string::npos ? 0 : slash);
      continue;
    }
    std::size_t before = resolved.size();
    if (!resolved.empty()) resolved += '/';
    resolved += part;
    if (pending.empty() && !follow_last) break;
    auto link = symlinks_.find(resolved);
    if (link == symlinks_.end()) continue;
    if (++hops > kMaxSymlinkHops) return "its path has a symlink loop";
    const std::string& target = link->second;
    if (!target.empty() && target[0] == '/') {
      return fmt::format(
          "its parent \"{}\" is a symlink to the absolute path \"{}\", which points outside the image root",
          resolved, target);
    }
    std::string through = resolved;
    resolved.resize(before);
    std::vector<std::string> parts;
    std::size_t pos = 0;
    while (pos <= target.size()) {
      std::size_t end = target.find('/', pos);
      if (end == std::string::npos) end = target.size();
      parts.emplace_back(target.substr(pos, end - pos));
      pos = end + 1;
    }
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending.push_back(std::move(*it));
    // Track the escape through this link for a precise message.
    std::string check = resolved;
    for (const auto& p : parts) {
      if (p == "..") {
        if (check.empty()) {
          return fmt::format("its parent \"{}\" is a symlink to \"{}\", which leads above the image root",
                             through, target);
        }
        auto slash = check.rfind('/');
        check.resize(slash == std::string::npos ? 0 : slash);
      } else if (!p.empty() && p != ".") {
        check += (check.empty() ? "" : "/") + p;
      }
    }
  }
  return {};
}

void LayerUnpacker::forget_symlinks_under(const std::string& rel) {
  std::string prefix = rel + "/";
  for (auto it = symlinks_.begin(); it != symlinks_.end();) {
    if (it->first == rel || it->first.rfind(prefix, 0) == 0) {
      it = symlinks_.erase(it);
    } else {
      ++it;
    }
  }
  last_dir_.clear();
}

Status LayerUnpacker::remove_path(const std::string& rel) {
  std::error_code ec;
  fs::remove_all(root_ / rel, ec);  // never follows symlinks
  if (ec) return Error::runtime((root_ / rel).string() + ": cannot apply a whiteout: " + ec.message());
  forget_symlinks_under(rel);
  return Ok{};
}

// An opaque directory hides everything lower layers put in it; what this layer wrote stays.
void LayerUnpacker::clear_opaque(const std::string& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir.empty() ? root_ : root_ / dir, ec), end;
  std::vector<fs::directory_entry> children;
  for (; !ec && it != end; it.increment(ec)) children.push_back(*it);
  for (const auto& child : children) {
    std::string rel = (dir.empty() ? "" : dir + "/") + child.path().filename().string();
    if (!layer_paths_.count(rel)) {
      (void)remove_path(rel);
    } else if (child.is_directory() && !child.is_symlink()) {
      clear_opaque(rel);
    }
  }
}

std::string archive_message(::archive* a) {
  const char* message = archive_error_string(a);
  return message ? message : "unknown error";
}

Status LayerUnpacker::apply(const LayerSource& layer) {
  layer_paths_.clear();
  last_dir_.clear();
  std::string where = layer.archive.string() + ": " + layer.label;
  if (layer.member.empty()) {
    Reader reader = new_layer_reader();
    if (archive_read_open_filename(reader.get(), layer.archive.c_str(), kReadBlock) != ARCHIVE_OK) {
      return Error::bad_input(where + ": cannot open the layer: " + archive_message(reader.get()));
    }
    return apply_entries(reader.get(), layer);
  }
  Reader outer(archive_read_new());
  archive_read_support_format_tar(outer.get());
  archive_read_support_filter_none(outer.get());
  if (archive_read_open_filename(outer.get(), layer.archive.c_str(), kReadBlock) != ARCHIVE_OK) {
    return Error::bad_input(layer.archive.string() + ": cannot open: " + archive_message(outer.get()));
  }
  std::string wanted = strip_dot_slash(layer.member);
  archive_entry* entry = nullptr;
  int r = 0;
  while ((r = archive_read_next_header(outer.get(), &entry)) >= ARCHIVE_WARN) {
    if (strip_dot_slash(archive_entry_pathname(entry)) != wanted) continue;
    Reader inner = new_layer_reader();
    if (archive_read_open(inner.get(), outer.get(), nullptr, read_from_outer, nullptr) != ARCHIVE_OK) {
      return Error::bad_input(where + ": the layer is corrupt: " + archive_message(inner.get()) +
                              "; re-export the image");
    }
    return apply_entries(inner.get(), layer);
  }
  if (r != ARCHIVE_EOF) {
    return Error::bad_input(layer.archive.string() + ": truncated or corrupt tar (" +
                            archive_message(outer.get()) + "); re-export the image with docker save");
  }
  return Error::bad_input(where + ": the layer named by manifest.json is not in the archive");
}

Status LayerUnpacker::apply_entries(archive* reader, const LayerSource& layer) {
  const std::string where = layer.archive.string() + ": " + layer.label;
  std::unique_ptr<archive, WriteDeleter> writer(archive_write_disk_new());
  // Owners are numeric (the image's /etc/passwd, not the host's); no name lookups, no fsync.
  int flags = ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_XATTR;
  // Root in a user namespace (a rootless run) keeps the files the user's own, so the user
  // can remove the cache; they are root's inside the container (docs/rootless.md).
  as_root_ = is_host_root();
  if (as_root_) flags |= ARCHIVE_EXTRACT_OWNER;
  archive_write_disk_set_options(writer.get(), flags);

  for (;;) {
    archive_entry* entry = nullptr;
    const int r = archive_read_next_header(reader, &entry);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN)
      return Error::bad_input(fmt::format("{}: the layer is corrupt or truncated ({}); re-export the image",
                                          where, archive_message(reader)));
    if (Status applied = apply_entry(reader, writer.get(), entry, where); !applied) return applied;
  }
  // Closing applies the deferred directory modes and times of this layer, before the next.
  if (archive_write_close(writer.get()) < ARCHIVE_WARN)
    return Error::runtime(
        fmt::format("{}: cannot finish the layer: {}", where, archive_message(writer.get())));
  return Ok{};
}

Status LayerUnpacker::apply_entry(archive* reader, archive* writer, archive_entry* entry,
                                  const std::string& where) {
  const std::string raw = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
  auto refuse = [&](const std::string& why) -> Status {
    return Error::bad_input(
        fmt::format("{}: entry \"{}\" would be written outside the image root ({}); the archive is unsafe "
                    "and was refused",
                    where, raw, why));
  };
  std::string rel;
  if (std::string why = normalize_entry_path(raw, rel); !why.empty()) return refuse(why);
  if (rel.empty()) return Ok{};  // the root folder itself
  if (Status s = count(entry, where); !s) return s;

  const auto slash = rel.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : rel.substr(0, slash);
  const std::string_view base = std::string_view(rel).substr(slash == std::string::npos ? 0 : slash + 1);
  std::string parent;
  if (std::string why = resolve_parent(dir, parent); !why.empty()) return refuse(why);
  if (base.substr(0, kWhiteoutPrefix.size()) == kWhiteoutPrefix) {
    if (Status s = apply_whiteout(parent, base); !s) return s.error().context(where);
    return Ok{};  // whiteouts are instructions, not files
  }

  std::string target = parent.empty() ? std::string(base) : parent + "/" + std::string(base);
  if (const char* hardlink = archive_entry_hardlink(entry)) {
    if (std::string why = redirect_hard_link(entry, hardlink, target); !why.empty())
      return refuse(fmt::format("its hard-link target \"{}\": {}", hardlink, why));
  }
  // No set-user-ID or set-group-ID file in the cache: the job's noNewPrivileges makes them
  // inert inside, and on the host they would give whoever reaches the cache its owner's ids.
  if (archive_entry_filetype(entry) != AE_IFDIR)
    archive_entry_set_perm(entry, archive_entry_perm(entry) & ~static_cast<mode_t>(S_ISUID | S_ISGID));
  track_symlink(entry, target);
  layer_paths_.insert(target);
  return write_entry(reader, writer, entry, root_prefix_ + target, raw, where);
}

std::string LayerUnpacker::resolve_parent(const std::string& dir, std::string& parent) {
  if (dir == last_dir_ && !last_dir_.empty()) {
    parent = last_dir_resolved_;
    return {};
  }
  if (std::string why = resolve(dir, true, parent); !why.empty()) return why;
  last_dir_ = dir;
  last_dir_resolved_ = parent;
  return {};
}

Status LayerUnpacker::apply_whiteout(const std::string& parent, std::string_view base) {
  if (base == kOpaqueMarker) {
    clear_opaque(parent);
    return Ok{};
  }
  const std::string_view name = base.substr(kWhiteoutPrefix.size());
  if (name.substr(0, kWhiteoutPrefix.size()) == kWhiteoutPrefix) return Ok{};  // ".wh..wh.*": not a whiteout
  return remove_path((parent.empty() ? "" : parent + "/").append(name));
}

std::string LayerUnpacker::redirect_hard_link(archive_entry* entry, const std::string& link_raw,
                                              const std::string& target) {
  std::string link_rel, link;
  if (std::string why = normalize_entry_path(link_raw, link_rel); !why.empty()) return why;
  if (std::string why = resolve(link_rel, false, link); !why.empty()) return why;
  archive_entry_set_hardlink(entry, (root_prefix_ + link).c_str());
  if (auto it = symlinks_.find(link); it != symlinks_.end()) {
    std::string copy = it->second;
    symlinks_[target] = copy;
    last_dir_.clear();
  }
  return {};
}

void LayerUnpacker::track_symlink(archive_entry* entry, const std::string& target) {
  if (auto it = symlinks_.find(target); it != symlinks_.end()) {
    // Replace a symlink, never write through it.
    ::unlink((root_prefix_ + target).c_str());
    symlinks_.erase(it);
    last_dir_.clear();
  }
  if (archive_entry_filetype(entry) == AE_IFLNK && !archive_entry_hardlink(entry)) {
    symlinks_[target] = archive_entry_symlink(entry) ? archive_entry_symlink(entry) : "";
    last_dir_.clear();
  }
}

Status LayerUnpacker::write_entry(archive* reader, archive* writer, archive_entry* entry,
                                  const std::string& full, const std::string& raw, const std::string& where) {
  auto corrupt = [&](const std::string& why) -> Status {
    return Error::bad_input(fmt::format(
        "{}: the layer is corrupt or truncated at \"{}\" ({}); re-export the image", where, raw, why));
  };
  auto unwritable = [&](const std::string& why) -> Status {
    return Error::runtime(fmt::format("{}: cannot write \"{}\": {}", where, raw, why));
  };
  const mode_t type = archive_entry_filetype(entry);
  // Never made, as root either: a device node in the cache would open the host's device to
  // whoever reaches it, and the container has runc's own /dev.
  if (type == AE_IFCHR || type == AE_IFBLK) return Ok{};
  if (type == AE_IFREG && !archive_entry_hardlink(entry)) {
    std::string error;
    switch (write_regular_file(reader, entry, full, as_root_, error)) {
      case FastWrite::Done:
        return Ok{};
      case FastWrite::ReadError:
        return corrupt(error);
      case FastWrite::WriteError:
        return unwritable(error);
      case FastWrite::NotHandled:
        break;
    }
  }
  archive_entry_set_pathname(entry, full.c_str());
  if (archive_write_header(writer, entry) < ARCHIVE_WARN) {
    if (type == AE_IFIFO) return Ok{};  // a FIFO the file system cannot hold is skipped
    return Error::bad_input(
        fmt::format("{}: cannot unpack entry \"{}\": {}", where, raw, archive_message(writer)));
  }
  if (archive_entry_size(entry) > 0 && type == AE_IFREG) {
    const void* block = nullptr;
    size_t size = 0;
    la_int64_t offset = 0;
    int r = ARCHIVE_OK;
    while ((r = archive_read_data_block(reader, &block, &size, &offset)) == ARCHIVE_OK)
      if (archive_write_data_block(writer, block, size, offset) < ARCHIVE_WARN)
        return unwritable(archive_message(writer));
    if (r != ARCHIVE_EOF) return corrupt(archive_message(reader));
  }
  if (archive_write_finish_entry(writer) < ARCHIVE_WARN)
    return Error::runtime(fmt::format("{}: cannot finish \"{}\": {}", where, raw, archive_message(writer)));
  return Ok{};
}

}  // namespace preflight::image
