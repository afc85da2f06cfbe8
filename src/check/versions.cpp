#include "check/versions.hpp"

#include <re2/re2.h>

#include <cctype>
#include <cstdlib>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include "util/text.hpp"

namespace preflight::check {

namespace {

constexpr long kAbsent = -1;  // no pre/post/dev part

std::string lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// A version by PEP 440 (packaging's Version): epoch, release, pre, post, dev and local parts.
struct Version {
  long epoch = 0;
  std::vector<long> release;
  int pre_kind = -1;  // 0 a, 1 b, 2 rc; -1 none
  long pre = kAbsent;
  long post = kAbsent;
  long dev = kAbsent;
  std::vector<std::string> local;  // lower-case parts, split at . - _

  bool is_prerelease() const { return pre_kind >= 0 || dev != kAbsent; }
  bool is_postrelease() const { return post != kAbsent; }
  Version base() const {  // epoch and release only
    Version v;
    v.epoch = epoch;
    v.release = release;
    return v;
  }
  Version public_part() const {
    Version v = *this;
    v.local.clear();
    return v;
  }
};

std::optional<Version> parse_version(const std::string& text) {
  static const re2::RE2 pattern(R"((?i)^\s*v?(?:(\d+)!)?(\d+(?:\.\d+)*))"
                                R"((?:[-_.]?(alpha|a|beta|b|preview|pre|c|rc)[-_.]?(\d+)?)?)"
                                R"((?:-(\d+)|[-_.]?(post|rev|r)[-_.]?(\d+)?)?)"
                                R"(([-_.]?dev[-_.]?(\d+)?)?)"
                                R"((?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$)");
  std::string epoch, release, pre_word, pre_number, post_dash, post_word, post_number, dev_part, dev_number,
      local;
  if (!re2::RE2::FullMatch(text, pattern, &epoch, &release, &pre_word, &pre_number, &post_dash, &post_word,
                           &post_number, &dev_part, &dev_number, &local))
    return std::nullopt;
  Version v;
  v.epoch = epoch.empty() ? 0 : std::atol(epoch.c_str());
  std::istringstream parts(release);
  for (std::string part; std::getline(parts, part, '.');) v.release.push_back(std::atol(part.c_str()));
  if (!pre_word.empty()) {
    const std::string word = lower(pre_word);
    v.pre_kind = (word == "a" || word == "alpha") ? 0 : (word == "b" || word == "beta") ? 1 : 2;
    v.pre = pre_number.empty() ? 0 : std::atol(pre_number.c_str());
  }
  if (!post_dash.empty())
    v.post = std::atol(post_dash.c_str());
  else if (!post_word.empty())
    v.post = post_number.empty() ? 0 : std::atol(post_number.c_str());
  if (!dev_part.empty()) v.dev = dev_number.empty() ? 0 : std::atol(dev_number.c_str());
  std::string part;
  for (char c : lower(local)) {
    if (c == '.' || c == '-' || c == '_') {
      v.local.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  if (!local.empty()) v.local.push_back(part);
  return v;
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// packaging's _cmpkey order: epoch, release without trailing zeros, pre (a dev release with
// neither pre nor post sorts before any pre-release; no pre sorts after all), post, dev, local.
int compare(const Version& a, const Version& b) {
  auto cmp = [](long x, long y) { return x < y ? -1 : x > y ? 1 : 0; };
  if (int c = cmp(a.epoch, b.epoch)) return c;
  auto trimmed = [](std::vector<long> r) {
    while (!r.empty() && r.back() == 0) r.pop_back();
    return r;
  };
  const auto ra = trimmed(a.release), rb = trimmed(b.release);
  if (ra != rb) return ra < rb ? -1 : 1;
  auto pre_key = [](const Version& v) -> std::pair<long, long> {
    if (v.pre_kind < 0 && v.post == kAbsent && v.dev != kAbsent) return {-2, 0};
    if (v.pre_kind < 0) return {3, 0};
    return {v.pre_kind, v.pre};
  };
  if (pre_key(a) != pre_key(b)) return pre_key(a) < pre_key(b) ? -1 : 1;
  if (int c = cmp(a.post, b.post)) return c;  // kAbsent (-1) sorts first
  auto dev_key = [](const Version& v) { return v.dev == kAbsent ? std::numeric_limits<long>::max() : v.dev; };
  if (int c = cmp(dev_key(a), dev_key(b))) return c;
  // Local: none sorts first; numeric parts above alphanumeric ones; then by length.
  for (std::size_t i = 0; i < std::min(a.local.size(), b.local.size()); ++i) {
    const bool na = all_digits(a.local[i]), nb = all_digits(b.local[i]);
    if (na != nb) return na ? 1 : -1;
    if (na) {
      if (int c = cmp(std::atol(a.local[i].c_str()), std::atol(b.local[i].c_str()))) return c;
    } else if (a.local[i] != b.local[i]) {
      return a.local[i] < b.local[i] ? -1 : 1;
    }
  }
  return cmp(static_cast<long>(a.local.size()), static_cast<long>(b.local.size()));
}

// The normalized text of a version's public part, split as packaging's _version_split does:
// "1.13.0a0" -> 1, 13, 0, a0 (the epoch first when there is one).
std::vector<std::string> version_split(const Version& v) {
  std::vector<std::string> parts;
  if (v.epoch) parts.push_back(std::to_string(v.epoch) + "!");
  for (long n : v.release) parts.push_back(std::to_string(n));
  static const char* kinds[] = {"a", "b", "rc"};
  if (v.pre_kind >= 0) parts.push_back(kinds[v.pre_kind] + std::to_string(v.pre));
  if (v.post != kAbsent) parts.push_back("post" + std::to_string(v.post));
  if (v.dev != kAbsent) parts.push_back("dev" + std::to_string(v.dev));
  return parts;
}

// ==1.13.* : the version's parts start with the prefix's, release numbers padded with zeros.
bool prefix_match(const Version& candidate, const Version& prefix) {
  const auto want = version_split(prefix);
  auto have = version_split(candidate.public_part());
  std::size_t numbers = 0;
  while (numbers < have.size() && all_digits(have[numbers])) ++numbers;
  std::size_t want_numbers = 0;
  while (want_numbers < want.size() && all_digits(want[want_numbers])) ++want_numbers;
  // Pad the candidate's release with zeros up to the prefix's length.
  while (numbers < want_numbers) have.insert(have.begin() + numbers++, "0");
  if (have.size() < want.size()) return false;
  have.resize(want.size());
  return have == want;
}

// One clause, as packaging's Specifier.contains(version, prereleases=True) reads it: what pip
// asks of a distribution that is already installed. nullopt: the clause cannot be read.
std::optional<bool> clause_holds(const Version& version, const std::string& raw_version,
                                 const std::string& clause) {
  static const re2::RE2 parts(R"(^\s*(===|==|!=|<=|>=|<|>|~=)\s*([^\s]+)\s*$)");
  std::string op, wanted;
  if (!re2::RE2::FullMatch(clause, parts, &op, &wanted)) return std::nullopt;
  if (op == "===") return lower(trim(raw_version)) == lower(wanted);
  const bool star = wanted.size() > 2 && wanted.compare(wanted.size() - 2, 2, ".*") == 0;
  if (star && op != "==" && op != "!=") return std::nullopt;
  auto spec = parse_version(star ? wanted.substr(0, wanted.size() - 2) : wanted);
  if (!spec) return std::nullopt;
  if (op == "==" || op == "!=") {
    bool same;
    if (star)
      same = prefix_match(version, *spec);
    else
      same = compare(spec->local.empty() ? version.public_part() : version, *spec) == 0;
    return op == "==" ? same : !same;
  }
  const int order_public = compare(version.public_part(), *spec);
  if (op == "<=") return order_public <= 0;
  if (op == ">=") return order_public >= 0;
  if (op == "<") {
    if (compare(version, *spec) >= 0) return false;
    // <3.1 does not take 3.1's own pre-releases, unless it names a pre-release.
    return spec->is_prerelease() || !version.is_prerelease() || compare(version.base(), spec->base()) != 0;
  }
  if (op == ">") {
    if (compare(version, *spec) <= 0) return false;
    // >3.1 takes neither 3.1's post-releases (unless it names one) nor 3.1+local.
    if (!spec->is_postrelease() && version.is_postrelease() && compare(version.base(), spec->base()) == 0)
      return false;
    return version.local.empty() || compare(version.base(), spec->base()) != 0;
  }
  // ~=1.4.2 means >=1.4.2 and ==1.4.*: the prefix drops the last release part (and post/dev).
  if (spec->release.size() < 2) return std::nullopt;
  Version prefix;
  prefix.epoch = spec->epoch;
  prefix.release = spec->release;
  if (spec->pre_kind < 0) prefix.release.pop_back();
  return order_public >= 0 && prefix_match(version, prefix);
}

}  // namespace

bool valid_version(const std::string& text) { return parse_version(text).has_value(); }

int compare_versions(const std::string& a, const std::string& b) {
  auto x = parse_version(a), y = parse_version(b);
  if (x && y) return compare(*x, *y);
  if (x || y) return x ? 1 : -1;  // an unreadable version sorts first, as a legacy one did
  return a < b ? -1 : a > b ? 1 : 0;
}

std::optional<bool> specifier_holds(const std::string& version, const std::string& specifier) {
  auto parsed = parse_version(version);
  std::istringstream clauses(specifier);
  std::string clause;
  bool holds = true;
  while (std::getline(clauses, clause, ',')) {
    if (trim(clause).empty()) continue;
    if (!parsed) return std::nullopt;
    auto one = clause_holds(*parsed, version, clause);
    if (!one) return std::nullopt;
    holds = holds && *one;
  }
  return holds;
}

bool satisfies(const std::string& version, const std::string& specifier) {
  return specifier_holds(version, specifier).value_or(true);
}

}  // namespace preflight::check
