// Room for one more run in the cache (docs/security.md "Crash-safe lifecycle"): the run
// folders kept and the unpacked images together within the cache's bound
// ($PREFLIGHT_CACHE_LIMIT), and the run folders' disk with the floor a run may not take
// (sandbox::DiskWatch::host_floor) free before the run starts. What goes first: what runs that
// Preflight stopped wrote, largest first; then older runs' folders, oldest first; then
// unpacked images no run holds, least recently used first.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "util/error.hpp"

namespace preflight::pipeline {

// The cache and its disk as a run is about to start.
struct CacheRoom {
  std::uint64_t runs_bytes = 0;    // the run folders, live ones too
  std::uint64_t images_bytes = 0;  // the unpacked images
  std::uint64_t limit = 0;         // $PREFLIGHT_CACHE_LIMIT
  std::uint64_t free = 0;          // on the run folders' disk
  std::uint64_t floor = 0;         // of that disk
};

// The bytes to free before a run: what the cache is over its bound, or its disk short of its
// floor, whichever is more.
std::uint64_t room_wanted(const CacheRoom& room);

// For a run in `runs_dir`, the cache's runs/ folder (its parent is the cache, whose unpacked
// images count too): reaps runs cut short and prunes finished ones to the newest `kept_runs`
// (sandbox::reap_abandoned), then frees what room_wanted asks, each removal told to
// `progress`. An error (exit 3) naming `runs_dir` and what to do when its disk still has less
// than its floor free.
Status make_room_for_run(const std::filesystem::path& runs_dir, std::size_t kept_runs,
                         const std::function<void(const std::string&)>& progress);

}  // namespace preflight::pipeline
