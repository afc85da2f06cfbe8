#include "check/image_diff.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <map>

namespace preflight::check {
using nlohmann::json;

namespace {

struct VersionKey {
  std::vector<long> release;
  int phase = 2;  // 0 dev, 1 pre-release, 2 final, 3 post-release
  long phase_number = 0;
};

VersionKey version_key(const std::string& text) {
  VersionKey key;
  std::string version = text.substr(0, text.find('+'));  // the local part does not order
  static const re2::RE2 release(R"(^[vV]?(?:\d+!)?(\d+(?:\.\d+)*)(.*)$)");
  std::string numbers, rest;
  if (!re2::RE2::FullMatch(version, release, &numbers, &rest)) return key;
  std::size_t start = 0;
  while (start <= numbers.size()) {
    const auto dot = numbers.find('.', start);
    key.release.push_back(std::atol(numbers.substr(start, dot - start).c_str()));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  while (key.release.size() > 1 && key.release.back() == 0) key.release.pop_back();
  std::string word;
  long number = 0;
  static const re2::RE2 suffix(R"(^[-_.]?(dev|a|alpha|b|beta|c|rc|pre|preview|post|rev|r)[-_.]?(\d*))");
  std::string digits;
  if (re2::RE2::PartialMatch(rest, suffix, &word, &digits)) {
    number = digits.empty() ? 0 : std::atol(digits.c_str());
    key.phase = word == "dev" ? 0 : (word == "post" || word == "rev" || word == "r") ? 3 : 1;
    key.phase_number = number;
  }
  return key;
}

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

int compare_versions(const std::string& a, const std::string& b) {
  const VersionKey x = version_key(a), y = version_key(b);
  if (x.release != y.release) return x.release < y.release ? -1 : 1;
  if (x.phase != y.phase) return x.phase < y.phase ? -1 : 1;
  if (x.phase_number != y.phase_number) return x.phase_number < y.phase_number ? -1 : 1;
  return 0;
}

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
