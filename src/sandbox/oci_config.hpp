// Turns a RunPlan into an OCI runtime config (config.json, runtime-spec 1.0) for runc:
// the platform's user with no capabilities, its environment, mounts, limits and seccomp
// policy, and fresh namespaces (no network unless the profile grants it).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plan/run_plan.hpp"
#include "plan/sandbox_floor.hpp"

namespace preflight::sandbox {

// `rootfs` is the container's root folder (an overlay over the cached image).
// `cgroup_path` is where runc places the container in the cgroup hierarchy; without one (a
// rootless run, docs/rootless.md) the config sets no resource limits.
nlohmann::json make_oci_config(const plan::RunPlan& plan, const std::filesystem::path& rootfs,
                               const std::optional<std::string>& cgroup_path);

// Those of plan::compat_abis() whose program loader the image at `rootfs` holds (/lib/ld-linux.so.2
// for i386, resolved in the image as in a root): the ABIs its programs can run in. Each ABI a
// seccomp filter answers costs runc about 10 ms of compiling at every start; a call of an ABI
// the filter does not answer kills the caller (SIGSYS).
std::vector<std::string> compat_abis_of_image(const std::filesystem::path& rootfs);

// One sentence for each of the platform's limits a run without a cgroup cannot enforce
// (memory, processes, CPUs), for the report's notes. The size of /dev/shm is always enforced.
std::vector<std::string> unenforced_limits(const spec::ResourceLimits& limits);

}  // namespace preflight::sandbox
