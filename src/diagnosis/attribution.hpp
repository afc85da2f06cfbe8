// Attribution: naming the environment difference behind a failure, from what Preflight knows
// about both sides — the platform's mounts and user, and this machine's files and modules.
// This is what turns "No such file" into "exists here, but the platform does not mount it".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "diagnosis/platform_variables.hpp"
#include "model/run_evidence.hpp"

namespace preflight::diagnosis {

struct EnvironmentDifference {
  std::string note;  // what differs, appended to the finding's message
  std::string hint;  // what to do about it; replaces the rule's generic hint
};

// The mount `path` lies on (the longest container_path prefix), or null.
const model::MountFact* mount_of(const std::vector<model::MountFact>& mounts, const std::string& path);

// A container path, absolute: relative ones are taken from the code folder (the platform's
// usual working directory).
std::string absolute_in_container(const std::string& path, const model::PlatformFacts& facts);

// A path the job could not find: a laptop-only path, a folder not mounted, a file missing
// from the local copy of an input, an output read before it was written.
std::optional<EnvironmentDifference> missing_path(const std::string& path, const model::PlatformFacts& facts);
// A module the image lacks while this machine's python has it.
std::optional<EnvironmentDifference> missing_module(const std::string& module,
                                                    const model::PlatformFacts& facts);
// A write refused: a read-only code or input mount, a root-owned folder of the image.
std::optional<EnvironmentDifference> write_denied(const std::string& path, const model::PlatformFacts& facts);
// An environment variable the code read with os.environ[...] (so `raised_in`, the innermost
// frame's file, is os.py) and the platform does not export; the hint names what the platform
// sets in its place when `variables` knows one.
std::optional<EnvironmentDifference> missing_env_var(const std::string& name, const std::string& raised_in,
                                                     const model::PlatformFacts& facts,
                                                     const PlatformVariables& variables);

}  // namespace preflight::diagnosis
