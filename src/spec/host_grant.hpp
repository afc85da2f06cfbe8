// What on the host a job file may name (docs/security.md "Host paths and registries"): the
// folder tree it belongs to, and what the person running Preflight grants on the command
// line. A job file, a profile it names or another platform's definition never widens it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace preflight::spec {

struct HostGrant {
  // Host folders the user allows besides the job's tree: --allow, $PREFLIGHT_ALLOW, and the
  // local sides of --map and --code (absolute).
  std::vector<std::filesystem::path> folders;
  // Registries (HOST or HOST:PORT) a job file may name images of: --allow-registry and
  // $PREFLIGHT_ALLOW_REGISTRY.
  std::vector<std::string> registries;
};

// The folder tree a job file in `job_dir` may name: the top of the git work tree that holds
// it, or `job_dir` outside one; never "/" nor the user's home ($HOME), where a work tree would
// take in every file of the user. Nullopt when even `job_dir` is one of them.
std::optional<std::filesystem::path> job_tree(const std::filesystem::path& job_dir);

// `path` after its links, when it lies in the job's tree or a folder of `grant`. Otherwise a
// bad_input error at `where`: "<what>: PATH is outside ..." with the --allow that would grant
// it. A path that does not exist is returned as it is, for the caller's own message.
Result<std::filesystem::path> confine_host_path(const std::filesystem::path& path,
                                                const std::filesystem::path& job_dir, const HostGrant& grant,
                                                const std::string& what, const SourceLocation& where);

// Whether a cloud or cluster path a job writes (s3://b/x, a PVC's subPath) has a ".."
// component, which would climb out of the local copy that --map or paths: gives it.
bool climbs_out(const std::string& written);

// The registry a registry reference (what follows docker://) names: its first component when
// that is a host (it has "." or ":", or is localhost), else Docker Hub's "docker.io".
std::string registry_host(const std::string& reference);

// Whether a job file may make Preflight fetch `reference` (what follows docker://): its
// registry is one of `grant`, and neither a loopback nor a link-local address, by name or by
// what the name resolves to. Otherwise a bad_input error at `where` that says how to allow it.
Status check_registry(const std::string& reference, const HostGrant& grant, const SourceLocation& where);

// The grant of the environment: $PREFLIGHT_ALLOW (folders, separated by ":") and
// $PREFLIGHT_ALLOW_REGISTRY (hosts, separated by ","), relative folders against `base_dir`.
HostGrant environment_grant(const std::filesystem::path& base_dir);

}  // namespace preflight::spec
