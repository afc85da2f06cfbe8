// `preflight cache list` and `preflight cache prune`: what the cache holds
// (docs/images.md "The cache"), and giving the disk back.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <set>

#include "cli/command.hpp"
#include "image/digest.hpp"
#include "image/image_store.hpp"
#include "image/rootfs_cache.hpp"
#include "sandbox/run_folder.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace preflight::cli {
namespace {

namespace fs = std::filesystem;

std::string when(fs::file_time_type time) {
  const auto since_epoch = std::chrono::file_clock::to_sys(time);
  return fmt::format("{:%Y-%m-%d %H:%M}", std::chrono::floor<std::chrono::minutes>(since_epoch));
}

int list() {
  const fs::path cache = image::default_cache_dir();
  const auto entries = image::RootfsCache(cache).entries();
  std::uint64_t total = 0;
  std::cout << "unpacked images in " << (cache / "rootfs").string() << ", least recently used first:\n";
  for (const auto& entry : entries) {
    total += entry.bytes;
    std::cout << fmt::format("  {}  {:>10}  used {}{}\n", entry.digest.substr(0, 19), human_size(entry.bytes),
                             when(entry.used), entry.in_use ? "  (in use)" : "");
  }
  auto limit = image::cache_limit();
  if (!limit) return report_error(limit.error());
  std::cout << fmt::format("{} image{}, {} of {} ({})\n", entries.size(), entries.size() == 1 ? "" : "s",
                           human_size(total), human_size(*limit), image::kCacheLimitVariable);
  return 0;
}

// Module indexes (<cache>/index/HEX-VERSION.json) of images no longer unpacked.
std::size_t remove_orphan_indexes(const fs::path& cache) {
  std::set<std::string> kept;
  for (const auto& entry : image::RootfsCache(cache).entries()) kept.insert(image::digest_hex(entry.digest));
  std::size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(cache / "index", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (kept.count(name.substr(0, name.find('-')))) continue;
    std::error_code ignored;
    removed += fs::remove(it->path(), ignored) ? 1 : 0;
  }
  return removed;
}

int prune(const std::string& keep_text) {
  if (auto exit_status = enter_user_namespace()) return *exit_status;  // runs' files may be the namespace's
  auto keep = parse_size(keep_text);
  if (!keep) return report_error(Error::bad_input("--keep: " + keep.error().message));
  const fs::path cache = image::default_cache_dir();
  std::uint64_t freed = 0;
  const auto removed = image::RootfsCache(cache).prune(*keep);
  for (const auto& entry : removed) {
    freed += entry.bytes;
    std::cout << fmt::format("removed {} ({}, used {})\n", entry.digest.substr(0, 19),
                             human_size(entry.bytes), when(entry.used));
  }
  const std::size_t indexes = remove_orphan_indexes(cache);
  // Runs and checks no live process holds: reaped (container, mounts, cgroup), then removed.
  const auto runs = sandbox::reap_abandoned(cache / "runs", 0);
  const auto checks = sandbox::reap_abandoned(cache / "checks", 0);
  std::cout << fmt::format(
      "{} image{} ({}), {} module index{}, {} run folder{} removed; images in use and "
      "built images' layouts ({}) kept\n",
      removed.size(), removed.size() == 1 ? "" : "s", human_size(freed), indexes, indexes == 1 ? "" : "es",
      runs.removed + checks.removed, runs.removed + checks.removed == 1 ? "" : "s",
      (cache / "images").string());
  return 0;
}

}  // namespace

Command cache_command() {
  return {"cache", "List or prune the cache of unpacked images and run folders", [](CLI::App& app) -> Action {
            auto keep = std::make_shared<std::string>("0");
            app.require_subcommand(1);
            app.add_subcommand("list", "the unpacked images, their sizes and last use");
            auto* prune_cmd = app.add_subcommand(
                "prune",
                "remove unpacked images no run is using (least recently used first) and finished runs");
            prune_cmd
                ->add_option("--keep", *keep, "keep the most recently used images up to this size, e.g. 20Gi")
                ->capture_default_str();
            return [keep, prune_cmd] { return prune_cmd->parsed() ? prune(*keep) : list(); };
          }};
}

}  // namespace preflight::cli
