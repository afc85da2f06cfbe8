#include "pipeline/harness_folder.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "check/image_python.hpp"
#include "image/rootfs_cache.hpp"
#include "plan/run_plan.hpp"
#include "util/data_dir.hpp"
#include "util/json_fields.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::pipeline {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Changed when what a key stands for changes (compile.py's flags, the folder's layout).
constexpr std::string_view kKeyVersion = "preflight harness bytecode 1: python -I -B -S -c compile.py";
// Bounds on what is copied and on what the image's interpreter sends back.
constexpr std::size_t kMaxFiles = 256;
constexpr std::size_t kMaxBytecodeBytes = 4u << 20;  // one module's
// A partial folder this old was left by a process that died while assembling it.
constexpr auto kAbandonedPartialAge = std::chrono::hours(1);

struct SourceFile {
  std::string path;  // relative to emulator/, '/'-separated
  std::string text;
  fs::perms perms;
};

// Every regular file of emulator/ but its bytecode: no link is followed, no __pycache__ read.
std::optional<std::vector<SourceFile>> source_files(const fs::path& emulator) {
  std::vector<SourceFile> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(emulator, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const auto status = it->symlink_status(ec);
    if (ec) return std::nullopt;
    if (fs::is_directory(status)) {
      if (it->path().filename() == "__pycache__") it.disable_recursion_pending();
      continue;
    }
    if (!fs::is_regular_file(status)) continue;
    auto text = read_file(it->path());
    if (!text || files.size() == kMaxFiles) return std::nullopt;
    files.push_back(
        {it->path().lexically_relative(emulator).generic_string(), std::move(*text),
         status.permissions() & (fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                 fs::perms::others_read | fs::perms::others_exec)});
  }
  if (ec) return std::nullopt;
  std::sort(files.begin(), files.end(),
            [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
  return files;
}

bool is_module(const SourceFile& file) {
  return file.path.starts_with("site/") && file.path.ends_with(".py");
}

// A folder (else a file) of this user's that no one else may write: what a kept entry must be.
bool own_entry(const fs::path& path, bool folder) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && (folder ? S_ISDIR(info.st_mode) : S_ISREG(info.st_mode)) &&
         info.st_uid == ::geteuid() && !(info.st_mode & (S_IWGRP | S_IWOTH));
}

bool write_new_file(const fs::path& path, std::string_view data, fs::perms perms) {
  UniqueFd out(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, static_cast<mode_t>(perms)));
  if (!out.valid()) return false;
  for (std::size_t done = 0; done < data.size();) {
    const ssize_t wrote = ::write(out.get(), data.data() + done, data.size() - done);
    if (wrote <= 0) return false;
    done += static_cast<std::size_t>(wrote);
  }
  return ::fchmod(out.get(), static_cast<mode_t>(perms)) == 0;  // whatever the umask took
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0 || hex.size() / 2 > kMaxBytecodeBytes) return std::nullopt;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int high = digit(hex[2 * i]);
    const int low = digit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out[i] = static_cast<char>(high * 16 + low);
  }
  return out;
}

// The image's bytecode of each module, as compile.py printed it: (the .pyc's path relative to
// the folder, its bytes). nullopt when the interpreter keeps none, or the output is not what
// was asked: a module not sent, a tag that is not a plain name, a .pyc past its bound.
std::optional<std::vector<std::pair<std::string, std::string>>> read_bytecode(
    const std::string& out, const std::vector<SourceFile>& files) {
  const json doc = json_fields::parse_bounded(out);
  const std::string tag = json_fields::text(doc, "tag");
  if (tag.empty() || tag.size() > 32 ||
      tag.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
    return std::nullopt;
  std::vector<std::pair<std::string, std::string>> bytecode;
  for (const auto& item : json_fields::list(doc, "files")) {
    const std::string path = json_fields::text(item, "path");
    const bool sent = std::any_of(files.begin(), files.end(), [&](const SourceFile& file) {
      return is_module(file) && file.path == path;
    });
    auto data = from_hex(json_fields::text(item, "pyc"));
    if (!sent || !data) return std::nullopt;
    const fs::path source(path);
    const std::string name = source.stem().string() + "." + tag + ".pyc";
    bytecode.emplace_back((source.parent_path() / "__pycache__" / name).generic_string(), std::move(*data));
  }
  return bytecode;
}

// The harness's files and their bytecode in `dir` (new), each folder 0755 and each file with
// its source's read and execute bits: the job's user reads them in its container.
bool assemble(const fs::path& dir, const std::vector<SourceFile>& files,
              const std::vector<std::pair<std::string, std::string>>& bytecode) {
  constexpr auto kFolder = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec;
  constexpr auto kBytecode =
      fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
  auto place = [&](const std::string& relative, std::string_view data, fs::perms perms) {
    const fs::path path = dir / relative;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    for (fs::path made = path.parent_path(); !ec && made != dir; made = made.parent_path())
      fs::permissions(made, kFolder, ec);  // whatever the umask took
    return !ec && write_new_file(path, data, perms);
  };
  for (const auto& file : files)
    if (!place(file.path, file.text, file.perms)) return false;
  for (const auto& [path, data] : bytecode)
    if (!place(path, data, kBytecode)) return false;
  std::error_code ec;
  fs::permissions(dir, kFolder, ec);
  return !ec;
}

// The newest kKeptHarnessFolders entries stay (a use renews an entry's time); partial folders
// of processes long gone go.
void keep_within_bounds(const fs::path& root) {
  std::vector<std::pair<fs::file_time_type, fs::path>> kept;
  const auto now = fs::file_time_type::clock::now();
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code stat_ec;
    const auto status = it->symlink_status(stat_ec);
    const auto used = it->last_write_time(stat_ec);
    if (stat_ec || !(fs::is_directory(status) || fs::is_regular_file(status))) continue;
    if (it->path().filename().string().starts_with(".")) {
      if (now - used > kAbandonedPartialAge) fs::remove_all(it->path(), stat_ec);
      continue;
    }
    kept.emplace_back(used, it->path());
  }
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = kKeptHarnessFolders; i < kept.size(); ++i) {
    std::error_code ignored;
    fs::remove_all(kept[i].second, ignored);
  }
}

}  // namespace

fs::path harness_folder(const image::UnpackedImage& image, const fs::path& cache_dir,
                        sandbox::ContainerRuntime& runtime) {
  fs::path emulator = data_dir() / "emulator";  // not const: each return moves it
  if (!image::kept_by_digest(image, cache_dir)) return emulator;
  auto python = check::ImagePython::find(image.rootfs, image.config.env, runtime);
  auto files = source_files(emulator);
  if (!python || !files) return emulator;
  Sha256 hash;
  for (std::string_view field :
       {kKeyVersion, std::string_view(image.digest), std::string_view(python->path())})
    hash.update_field(field);
  for (const auto& file : *files) {
    hash.update_field(file.path);
    hash.update_field(file.text);
    hash.update_field(fmt::format("{:o}", static_cast<unsigned>(file.perms)));
  }
  const fs::path root = cache_dir / "harness";
  const fs::path kept = root / hash.hex();
  // What the image's interpreter answered before: no bytecode it keeps, or none to trust.
  const fs::path refused = root / (hash.hex() + ".none");
  for (const auto& [entry, folder] : {std::pair{kept, true}, std::pair{refused, false}}) {
    if (!own_entry(entry, folder)) continue;
    ::utimensat(AT_FDCWD, entry.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);  // the last use
    return folder ? kept : emulator;
  }

  const auto compile_file = read_file(emulator / "check" / "compile.py");
  if (!compile_file) return emulator;
  json request = {{"files", json::array()}};
  for (const auto& file : *files)
    if (is_module(file))
      request["files"].push_back({{"path", file.path},
                                  {"origin", fmt::format("{}/{}", plan::kEmulatorMount, file.path)},
                                  {"text", file.text}});
  auto run = python->run(*compile_file, request.dump(-1, ' ', true, json::error_handler_t::replace),
                         /*with_site=*/false);
  if (!run || run->exit_code != 0) return emulator;
  std::error_code ec;
  fs::create_directories(root, ec);
  auto bytecode = read_bytecode(run->out, *files);
  if (!bytecode) {  // asked again only when the harness or the image changes
    write_new_file(refused, "", fs::perms::owner_read | fs::perms::owner_write);
    keep_within_bounds(root);
    return emulator;
  }
  const fs::path partial = root / fmt::format(".{}.{:08x}", hash.hex(), std::random_device()());
  if (ec || !fs::create_directory(partial, ec) || !assemble(partial, *files, *bytecode)) {
    fs::remove_all(partial, ec);
    return emulator;
  }
  // Another command may have placed the same folder meanwhile: either is whole.
  fs::rename(partial, kept, ec);
  if (ec) fs::remove_all(partial, ec);
  keep_within_bounds(root);
  return own_entry(kept, true) ? kept : emulator;
}

}  // namespace preflight::pipeline
