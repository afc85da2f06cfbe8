#include "check/versions.hpp"

#include <re2/re2.h>

#include <cstdlib>
#include <sstream>
#include <vector>

#include "util/text.hpp"

namespace preflight::check {

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

bool clause_holds(const std::string& version, const std::string& clause) {
  static const re2::RE2 parts(R"(^\s*(===|==|!=|<=|>=|<|>|~=)\s*([^\s]+)\s*$)");
  std::string op, wanted;
  if (!re2::RE2::FullMatch(clause, parts, &op, &wanted)) return true;
  if (op == "===") return version == wanted;
  if (wanted.size() > 2 && wanted.compare(wanted.size() - 2, 2, ".*") == 0) {
    // ==1.13.* : the release starts with 1.13.
    const std::string prefix = wanted.substr(0, wanted.size() - 2);
    const std::string release = version.substr(0, version.find_first_not_of("0123456789."));
    const bool same = release == prefix || release.rfind(prefix + ".", 0) == 0;
    return op == "==" ? same : op == "!=" ? !same : true;
  }
  const int order = compare_versions(version, wanted);
  if (op == "==") return order == 0;
  if (op == "!=") return order != 0;
  if (op == "<=") return order <= 0;
  if (op == ">=") return order >= 0;
  if (op == "<") return order < 0;
  if (op == ">") return order > 0;
  // ~=1.4.2 means >=1.4.2 and ==1.4.*
  const auto last_dot = wanted.rfind('.');
  if (order < 0 || last_dot == std::string::npos) return order >= 0;
  return clause_holds(version, "==" + wanted.substr(0, last_dot) + ".*");
}

}  // namespace

int compare_versions(const std::string& a, const std::string& b) {
  const VersionKey x = version_key(a), y = version_key(b);
  if (x.release != y.release) return x.release < y.release ? -1 : 1;
  if (x.phase != y.phase) return x.phase < y.phase ? -1 : 1;
  if (x.phase_number != y.phase_number) return x.phase_number < y.phase_number ? -1 : 1;
  return 0;
}

bool satisfies(const std::string& version, const std::string& specifier) {
  std::istringstream clauses(specifier);
  std::string clause;
  while (std::getline(clauses, clause, ','))
    if (!trim(clause).empty() && !clause_holds(version, clause)) return false;
  return true;
}

}  // namespace preflight::check
