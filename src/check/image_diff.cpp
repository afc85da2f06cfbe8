#include "check/image_diff.hpp"

#include <fmt/format.h>

#include <map>

namespace preflight::check {
using nlohmann::json;

namespace {

std::map<std::string, std::string> env_map(const std::vector<std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& entry : env) {
    const auto eq = entry.find('=');
    out[entry.substr(0, eq)] = eq == std::string::npos ? "" : entry.substr(eq + 1);
  }
  return out;
}

template <typename Map>
std::vector<VersionChange> changes(const Map& before, const Map& after, bool versions) {
  std::vector<VersionChange> out;
  for (const auto& [name, old_value] : before) {
    auto it = after.find(name);
    if (it == after.end()) {
      out.push_back({name, old_value, "", "removed"});
    } else if (it->second != old_value) {
      const int order = versions ? compare_versions(it->second, old_value) : 0;
      out.push_back({name, old_value, it->second,
                     order > 0   ? "upgraded"
                     : order < 0 ? "downgraded"
                                 : "changed"});
    }
  }
  for (const auto& [name, value] : after)
    if (!before.count(name)) out.push_back({name, "", value, "added"});
  return out;
}

std::map<std::string, std::string> dist_versions(const ImageInspection& image) {
  std::map<std::string, std::string> out;
  if (image.python)
    for (const auto& d : image.python->distributions) out[normalize_distribution_name(d.name)] = d.version;
  return out;
}

}  // namespace

ImageDiff diff_images(const ImageInspection& before, const ImageInspection& after) {
  ImageDiff diff;
  diff.before_ref = before.ref;
  diff.after_ref = after.ref;
  diff.python_before = before.python ? before.python->python_version : "none";
  diff.python_after = after.python ? after.python->python_version : "none";
  diff.os_before = before.os;
  diff.os_after = after.os;
  diff.distributions = changes(dist_versions(before), dist_versions(after), true);
  diff.environment = changes(env_map(before.config.env), env_map(after.config.env), false);
  return diff;
}

json to_json(const ImageDiff& diff) {
  auto list = [](const std::vector<VersionChange>& items) {
    json out = json::array();
    for (const auto& c : items)
      out.push_back({{"name", c.name},
                     {"before", c.before.empty() && c.kind == "added" ? json(nullptr) : json(c.before)},
                     {"after", c.after.empty() && c.kind == "removed" ? json(nullptr) : json(c.after)},
                     {"change", c.kind}});
    return out;
  };
  return {{"schema", "preflight.image-diff/v1"},
          {"before", diff.before_ref},
          {"after", diff.after_ref},
          {"python", {{"before", diff.python_before}, {"after", diff.python_after}}},
          {"os", {{"before", diff.os_before}, {"after", diff.os_after}}},
          {"distributions", list(diff.distributions)},
          {"environment", list(diff.environment)}};
}

void print_diff(const ImageDiff& diff, std::ostream& out) {
  out << fmt::format("{} → {}\n", diff.before_ref, diff.after_ref);
  out << fmt::format("python: {}\n", diff.python_before == diff.python_after
                                         ? diff.python_after + " (unchanged)"
                                         : diff.python_before + " → " + diff.python_after);
  if (diff.os_before != diff.os_after) out << fmt::format("os: {} → {}\n", diff.os_before, diff.os_after);
  out << (diff.distributions.empty() ? "distributions: unchanged\n" : "distributions:\n");
  for (const auto& c : diff.distributions) {
    if (c.kind == "added")
      out << fmt::format("  + {} {}\n", c.name, c.after);
    else if (c.kind == "removed")
      out << fmt::format("  - {} {}\n", c.name, c.before);
    else
      out << fmt::format("  ~ {} {} → {} ({})\n", c.name, c.before, c.after, c.kind);
  }
  out << (diff.environment.empty() ? "environment: unchanged\n" : "environment:\n");
  for (const auto& c : diff.environment) {
    if (c.kind == "added")
      out << fmt::format("  + {}={}\n", c.name, c.after);
    else if (c.kind == "removed")
      out << fmt::format("  - {}\n", c.name);
    else
      out << fmt::format("  ~ {}: {} → {}\n", c.name, c.before, c.after);
  }
}

}  // namespace preflight::check
