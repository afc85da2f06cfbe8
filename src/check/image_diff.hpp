// `preflight image diff A B`: what changed between two images that matters to jobs — the
// Python version, distributions added, removed, upgraded or downgraded, and the environment.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "check/image_inspect.hpp"
#include "check/versions.hpp"

namespace preflight::check {

struct VersionChange {
  std::string name;
  std::string before;  // empty: added
  std::string after;   // empty: removed
  std::string kind;    // "added" | "removed" | "upgraded" | "downgraded" | "changed"
};

struct ImageDiff {
  std::string before_ref, after_ref;
  std::string python_before, python_after;  // "none" without Python
  std::string os_before, os_after;
  std::vector<VersionChange> distributions;
  std::vector<VersionChange> environment;  // name, old value, new value
};

ImageDiff diff_images(const ImageInspection& before, const ImageInspection& after);

nlohmann::json to_json(const ImageDiff& diff);
void print_diff(const ImageDiff& diff, std::ostream& out);

}  // namespace preflight::check
