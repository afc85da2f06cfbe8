// What an image's Python can import and which distributions it has (emulator/check/index.py,
// run with the image's interpreter), cached by image digest: the ground truth for "Library
// Not Found" before any container starts, and for `preflight image inspect|diff`.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "image/image_store.hpp"
#include "sandbox/runtime.hpp"
#include "util/error.hpp"

namespace preflight::check {

struct Distribution {
  std::string name;
  std::string version;
  std::vector<std::string> requirements;  // Requires-Dist, markers included
  std::vector<std::string> top_level;     // the import names it provides, when recorded
  std::string location;                   // the sys.path folder it is installed in
};

// A requirement of an installed distribution that the image does not meet (`pip check`).
struct BrokenRequirement {
  std::string name;
  std::string version;
  std::string requirement;
  std::string problem;  // "missing" | "has numpy 1.24.2"
};

struct ModuleIndex {
  std::string python_version;  // "3.11.2"
  std::string interpreter;     // inside the image, e.g. /usr/bin/python3
  std::vector<std::string> path;
  std::set<std::string> modules;  // importable top-level names: stdlib, builtins, packages
  std::set<std::string> stdlib;
  std::vector<Distribution> distributions;
  std::vector<BrokenRequirement> broken;

  bool importable(const std::string& top_level) const { return modules.count(top_level) > 0; }
  // By PEP 503 normalized name ("PyYAML" == "pyyaml", "opt_einsum" == "opt-einsum").
  const Distribution* distribution(const std::string& name) const;
};

std::string normalize_distribution_name(const std::string& name);

// The index of `image`: from the cache (<cache>/index/), else built with the image's own
// Python, run by `runtime`, and cached. nullopt when the image has no Python.
Result<std::optional<ModuleIndex>> load_module_index(const image::UnpackedImage& image,
                                                     const std::filesystem::path& cache_dir,
                                                     sandbox::ContainerRuntime& runtime);

// Parses index.py's JSON; bad input names `source`.
Result<ModuleIndex> parse_module_index(const std::string& json, const std::string& source);

}  // namespace preflight::check
