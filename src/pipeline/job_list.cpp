#include "pipeline/job_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <string_view>
#include <system_error>

#include "image/image_store.hpp"
#include "spec/platform_profile.hpp"
#include "util/sha256.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::pipeline {
namespace {

namespace fs = std::filesystem;

// The most a list of jobs may weigh.
constexpr std::size_t kMaxListBytes = 16 << 20;

bool is_job_file(const fs::path& path) { return path.extension() == ".yaml" || path.extension() == ".yml"; }

bool is_pruned(const fs::path& folder) {
  const std::string name = folder.filename().string();
  return name.starts_with(".") || name == "node_modules";
}

class Expansion {
 public:
  Status add(const fs::path& job) {
    const fs::path normal = fs::absolute(job).lexically_normal();
    if (!seen_.insert(normal).second) return Ok{};
    if (jobs_.size() == kMaxBatchJobs)
      return Error::bad_input(
          fmt::format("more than {} jobs in one batch: split it with --shard", kMaxBatchJobs));
    jobs_.push_back(normal);
    return Ok{};
  }

  // Every job.yaml below `dir`, sorted; `named` says where the folder was named, for errors.
  Status add_folder(const fs::path& dir, const std::string& named) {
    std::vector<fs::path> found;
    std::uint64_t entries = 0;
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec);
    for (const fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
      if (++entries > kMaxJobSearchEntries)
        return Error::bad_input(
            fmt::format("{}: {} holds more than {} entries: name its jobs' folders instead", named,
                        dir.string(), kMaxJobSearchEntries));
      std::error_code type_ec;
      const bool folder = it->is_directory(type_ec) && !it->is_symlink(type_ec);
      if (folder && is_pruned(it->path())) {
        it.disable_recursion_pending();
        continue;
      }
      if (!folder && it->path().filename() == "job.yaml" && it->is_regular_file(type_ec) &&
          !it->is_symlink(type_ec))
        found.push_back(it->path());
    }
    if (ec)
      return Error::bad_input(fmt::format("{}: cannot search {}: {}", named, dir.string(), ec.message()));
    if (found.empty()) return Error::bad_input(fmt::format("{}: no job.yaml below {}", named, dir.string()));
    std::sort(found.begin(), found.end());
    for (const fs::path& job : found)
      if (auto added = add(job); !added) return added;
    return Ok{};
  }

  // A job file or a folder; `from_list`: named by a list, which may not name another.
  Status add_path(const fs::path& path, const std::string& named, bool from_list) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status))
      return Error::bad_input(fmt::format("{}: {} does not exist", named, path.string()));
    if (fs::is_directory(status)) return add_folder(path, named);
    if (is_job_file(path)) return add(path);
    if (from_list)
      return Error::bad_input(
          fmt::format("{}: {} is not a job file (.yaml, .yml) or a folder: a list may not "
                      "name another list",
                      named, path.string()));
    return add_list(path);
  }

  Status add_list(const fs::path& list) {
    auto text = read_regular_file(list, kMaxListBytes);
    if (!text)
      return Error::bad_input("cannot read the list of jobs " + list.string() + ": " + text.error().message);
    const fs::path base = list.parent_path();
    std::string_view rest = *text;
    for (int line = 1; !rest.empty(); ++line) {
      const std::size_t end = std::min(rest.find('\n'), rest.size());
      std::string_view entry = rest.substr(0, end);
      rest.remove_prefix(std::min(end + 1, rest.size()));
      while (!entry.empty() && (entry.back() == '\r' || entry.back() == ' ' || entry.back() == '\t'))
        entry.remove_suffix(1);
      while (!entry.empty() && (entry.front() == ' ' || entry.front() == '\t')) entry.remove_prefix(1);
      if (entry.empty() || entry.front() == '#') continue;
      const std::string named = fmt::format("{}:{}", list.string(), line);
      if (auto added = add_path(base / fs::path(std::string(entry)), named, true); !added) return added;
    }
    return Ok{};
  }

  std::vector<fs::path> take() { return std::move(jobs_); }

 private:
  std::vector<fs::path> jobs_;
  std::set<fs::path> seen_;
};

}  // namespace

Result<std::vector<fs::path>> expand_jobs(const std::vector<std::string>& args) {
  Expansion expansion;
  for (const std::string& arg : args)
    if (auto added = expansion.add_path(arg, arg, false); !added) return added.error();
  return expansion.take();
}

Result<Shard> parse_shard(const std::string& text) {
  Shard shard;
  const auto slash = text.find('/');
  const auto number = [](std::string_view part, int& out) {
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return ec == std::errc() && end == part.data() + part.size();
  };
  const std::string_view whole = text;
  if (slash == std::string::npos || !number(whole.substr(0, slash), shard.index) ||
      !number(whole.substr(slash + 1), shard.count) || shard.count < 1 || shard.count > 10000 ||
      shard.index < 1 || shard.index > shard.count)
    return Error::bad_input("--shard takes I/N, this runner's share of N from 1 (for example 2/8), not '" +
                            text + "'");
  return shard;
}

std::vector<fs::path> shard_of(const std::vector<fs::path>& jobs, Shard shard, const fs::path& base) {
  std::vector<fs::path> mine;
  for (const fs::path& job : jobs) {
    fs::path relative = job.lexically_relative(base);
    if (relative.empty() || *relative.begin() == "..") relative = job;
    const std::string digest = sha256_hex(relative.generic_string());
    std::uint32_t head = 0;  // the digest's first 32 bits
    std::from_chars(digest.data(), digest.data() + 8, head, 16);
    if (static_cast<int>(head % static_cast<std::uint32_t>(shard.count)) == shard.index - 1)
      mine.push_back(job);
  }
  return mine;
}

Result<std::vector<fs::path>> select_jobs(const std::vector<std::string>& args, const std::string& shard,
                                          const fs::path& base) {
  auto jobs = expand_jobs(args);
  if (!jobs || shard.empty()) return jobs;
  auto share = parse_shard(shard);
  if (!share) return std::move(share).error();
  return shard_of(*jobs, *share, base);
}

Status check_batch_options(std::string& platform, const std::string& image) {
  if (!platform.empty()) {
    auto profile = spec::load_platform(platform, spec::shipped_platforms_dir());
    if (!profile) return std::move(profile).error().context("--platform");
    if (platform.find('/') != std::string::npos || platform.ends_with(".yaml") || platform.ends_with(".yml"))
      platform = std::filesystem::absolute(platform).lexically_normal().string();
  }
  if (!image.empty())
    if (auto ref = image::parse_image_ref(image, std::filesystem::current_path()); !ref)
      return std::move(ref).error().context("--image");
  return Ok{};
}

}  // namespace preflight::pipeline
