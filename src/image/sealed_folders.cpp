#include "image/sealed_folders.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "util/untrusted_fs.hpp"

namespace preflight::image {
namespace fs = std::filesystem;

namespace {

// Whether one entry leaves a user other than root no way to change it: root's, no group or
// world write (for a link, its folder decides), not a device.
bool entry_sealed(const struct stat& st) {
  if (st.st_uid != 0 || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return false;
  return S_ISLNK(st.st_mode) || (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

struct Tally {
  bool folder = false;  // a folder itself, not a link to one
  bool sealed = true;
  std::uint64_t entries = 0;
};

// "a/b/c" → "a/b" at `components` 2; the whole path when it has fewer.
std::string_view leading(std::string_view path, int components) {
  std::size_t end = 0;
  for (int i = 0; i < components; ++i) {
    end = path.find('/', end == 0 ? 0 : end + 1);
    if (end == std::string_view::npos) return path;
  }
  return path.substr(0, end);
}

// A recorded path: one or two plain names.
bool valid_path(std::string_view path) {
  const auto plain = [](std::string_view name) { return !name.empty() && name != "." && name != ".."; };
  const std::size_t slash = path.find('/');
  if (slash == std::string_view::npos) return plain(path);
  const std::string_view second = path.substr(slash + 1);
  return plain(path.substr(0, slash)) && second.find('/') == std::string_view::npos && plain(second);
}

}  // namespace

Result<std::vector<SealedFolder>> sealed_folders(const fs::path& root, std::uint64_t max_entries) {
  std::map<std::string, Tally, std::less<>> tallies;
  const auto tally = [&](std::string_view path) -> Tally& {
    auto it = tallies.find(path);
    return it != tallies.end() ? it->second : tallies.emplace(std::string(path), Tally{}).first->second;
  };
  const bool whole =
      walk_job_tree(root, max_entries, [&](const std::string& relative, const struct stat& st) {
        const bool sealed = entry_sealed(st);
        for (int depth = 1; depth <= 2; ++depth) {
          const std::string_view folder = leading(relative, depth);
          Tally& t = tally(folder);
          if (folder.size() == relative.size()) {
            t.folder = S_ISDIR(st.st_mode);
          } else {
            ++t.entries;
          }
          t.sealed = t.sealed && sealed;
          if (folder.size() == relative.size()) break;
        }
      });
  if (!whole)
    return Error::runtime(
        fmt::format("{}: cannot be read whole (more than {} files, folders and links, "
                    "deeper than {} folders, or a folder that does not open)",
                    root.string(), max_entries, kMaxWalkDepth));
  std::vector<SealedFolder> folders;
  for (const auto& [path, t] : tallies)
    if (t.folder && t.sealed) folders.push_back({path, t.entries});
  return folders;
}

std::string format_sealed(const std::vector<SealedFolder>& folders) {
  std::string text;
  for (const SealedFolder& folder : folders) text += fmt::format("{} {}\n", folder.entries, folder.path);
  return text;
}

std::optional<std::vector<SealedFolder>> parse_sealed(std::string_view text) {
  std::vector<SealedFolder> folders;
  while (!text.empty()) {
    const std::string_view line = text.substr(0, text.find('\n'));
    text.remove_prefix(std::min(text.size(), line.size() + 1));
    if (line.empty()) continue;
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    SealedFolder folder{std::string(line.substr(space + 1)), 0};
    const auto [end, error] = std::from_chars(line.data(), line.data() + space, folder.entries);
    if (error != std::errc() || end != line.data() + space || !valid_path(folder.path)) return std::nullopt;
    folders.push_back(std::move(folder));
  }
  return folders;
}

}  // namespace preflight::image
