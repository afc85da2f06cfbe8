// `preflight cache list`, `preflight cache verify` and `preflight cache prune`: what the cache
// holds, whether it is whole (docs/images.md "The cache"), and giving the disk back.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <set>

#include "cli/command.hpp"
#include "image/digest.hpp"
#include "image/image_store.hpp"
#include "image/rootfs_cache.hpp"
#include "sandbox/disk_watch.hpp"
#include "sandbox/run_folder.hpp"
#include "util/data_dir.hpp"
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
  // Kept run folders count against the same bound (docs/security.md "Crash-safe lifecycle").
  const std::uint64_t runs = sandbox::disk_used({cache / "runs"}, sandbox::kDiskWalkEntries);
  std::cout << fmt::format("{} image{} ({}) and the run folders in {} ({}): {} of {} ({})\n", entries.size(),
                           entries.size() == 1 ? "" : "s", human_size(total), (cache / "runs").string(),
                           human_size(runs), human_size(total + runs), human_size(*limit),
                           image::kCacheLimitVariable);
  return 0;
}

std::string_view state_text(image::EntryCheck::State state) {
  using State = image::EntryCheck::State;
  switch (state) {
    case State::Verified:
      return "verified";
    case State::Unchecked:
      return "not checked";
    case State::InProgress:
      return "in progress";
    case State::Incomplete:
      return "incomplete";
    case State::Foreign:
      return "foreign";
    case State::Corrupt:
      return "does not verify";
  }
  return "?";
}

// The names in the cache's rootfs/ folder of the images given: each a digest as `cache list`
// prints it, or an image as a job names it whose digest is here without building or pulling it.
Result<std::vector<std::string>> entries_of(const std::vector<std::string>& images, const fs::path& cache) {
  const image::RootfsCache rootfs(cache);
  const image::ImageStore store(cache, data_dir() / "images");
  std::vector<std::string> names;
  for (const auto& text : images) {
    const bool by_digest = text.starts_with("sha256:");
    Result<std::string> digest = text;
    if (!by_digest) {
      auto ref = image::parse_image_ref(text, fs::current_path());
      if (!ref) return ref.error();
      digest = store.digest_here(*ref);
      if (!digest) return digest.error();
    }
    auto name = rootfs.find_entry(*digest);
    if (!name) return by_digest ? name.error() : name.error().context("image " + text);
    names.push_back(std::move(*name));
  }
  return names;
}

// Exit 1 when any name checked in the cache's rootfs/ folder is incomplete, foreign or does not
// verify; exit 2 when an image given is not in the cache.
int verify(const std::vector<std::string>& images) {
  // Without root, images are unpacked in Preflight's user namespace: their owners read as there.
  if (auto exit_status = enter_user_namespace()) return *exit_status;
  const fs::path cache = image::default_cache_dir();
  auto names = entries_of(images, cache);
  if (!names) return report_error(names.error());
  const fs::path rootfs = cache / "rootfs";
  std::cout << "verifying " << (images.empty() ? "the" : "these") << " unpacked images in " << rootfs.string()
            << ":\n";
  std::size_t verified = 0, failed = 0, other = 0;
  for (const auto& check : image::RootfsCache(cache).verify(*names)) {
    const bool entry = check.name.starts_with(image::cache_names::kEntryPrefix) && !check.fails();
    const std::string name =
        entry ? "sha256:" + check.name.substr(image::cache_names::kEntryPrefix.size(), 12) : check.name;
    if (check.state == image::EntryCheck::State::Verified) {
      ++verified;
      std::cout << fmt::format("  {}  verified: {} files, folders and links; {}\n", name, check.files,
                               human_size(check.bytes));
      continue;
    }
    (check.fails() ? failed : other) += 1;
    std::cout << fmt::format("  {}  {}: {}\n", check.fails() ? (rootfs / check.name).string() : name,
                             state_text(check.state), check.detail);
  }
  std::cout << fmt::format("{} verified, {} not verified, {} failed\n", verified, other, failed);
  if (failed == 0) return 0;
  std::cerr << fmt::format(
      "preflight: error: {} name{} in the image cache {} not verify; remove {} (the next run unpacks the "
      "image again)\n",
      failed, failed == 1 ? "" : "s", failed == 1 ? "does" : "do", failed == 1 ? "it" : "them");
  return 1;
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
  // Runs and checks no live process holds: reaped (container, mounts, cgroup), then removed;
  // first, since a container a killed Preflight left still runs on its image's root.
  const auto runs = sandbox::reap_abandoned(cache / "runs", 0);
  const auto checks = sandbox::reap_abandoned(cache / "checks", 0);
  std::uint64_t freed = 0;
  const auto removed = image::RootfsCache(cache).prune(*keep);
  for (const auto& entry : removed) {
    freed += entry.bytes;
    std::cout << fmt::format("removed {} ({}, used {})\n", entry.digest.substr(0, 19),
                             human_size(entry.bytes), when(entry.used));
  }
  const std::size_t indexes = remove_orphan_indexes(cache);
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
  return {
      "cache", "List, verify or prune the cache of unpacked images and run folders",
      [](CLI::App& app) -> Action {
        auto keep = std::make_shared<std::string>("0");
        auto images = std::make_shared<std::vector<std::string>>();
        app.require_subcommand(1);
        app.add_subcommand("list", "the unpacked images, their sizes and last use");
        auto* verify_cmd = app.add_subcommand(
            "verify", "check each unpacked image against its digest and the digest of its files");
        verify_cmd->add_option("image", *images,
                               "only these: digests as `cache list` prints them (sha256:0123456789ab), or "
                               "images as a job names them (python, oci:PATH, docker-archive:PATH)");
        auto* prune_cmd = app.add_subcommand(
            "prune", "remove unpacked images no run is using (least recently used first) and finished runs");
        prune_cmd
            ->add_option("--keep", *keep, "keep the most recently used images up to this size, e.g. 20Gi")
            ->capture_default_str();
        return [keep, images, prune_cmd, verify_cmd] {
          if (verify_cmd->parsed()) return verify(*images);
          return prune_cmd->parsed() ? prune(*keep) : list();
        };
      }};
}

}  // namespace preflight::cli
