// Turns a RunPlan into an OCI runtime config (config.json, runtime-spec 1.0) for runc:
// the platform's user with no capabilities, its environment, mounts and limits, and fresh
// namespaces (no network unless the profile grants it).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

#include "plan/run_plan.hpp"

namespace preflight::sandbox {

// `rootfs` is the container's root folder (an overlay over the cached image).
// `cgroup_path` is where runc places the container in the cgroup hierarchy.
nlohmann::json make_oci_config(const plan::RunPlan& plan, const std::filesystem::path& rootfs,
                               const std::string& cgroup_path);

}  // namespace preflight::sandbox
