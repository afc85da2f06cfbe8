#include "check/requirements.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "check/code_findings.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::check {
namespace fs = std::filesystem;

namespace {

// --- markers (PEP 508) ------------------------------------------------------------------------

struct MarkerParser {
  std::vector<std::string> tokens;
  std::size_t at = 0;
  const MarkerEnvironment& env;
  bool failed = false;

  const std::string& peek() const {
    static const std::string end;
    return at < tokens.size() ? tokens[at] : end;
  }

  // A value: a quoted string, or a variable's value; nullopt for an unknown variable.
  std::optional<std::string> value() {
    const std::string token = at < tokens.size() ? tokens[at++] : "";
    if (token.size() >= 2 && (token[0] == '"' || token[0] == '\'')) return token.substr(1, token.size() - 2);
    const std::string& v = env.python_full_version;
    const auto second_dot = v.find('.', v.find('.') + 1);
    if (token == "python_version") return v.substr(0, second_dot);
    if (token == "python_full_version" || token == "implementation_version") return v;
    if (token == "os_name" || token == "os.name") return std::string("posix");
    if (token == "sys_platform" || token == "sys.platform") return std::string("linux");
    if (token == "platform_system") return std::string("Linux");
    if (token == "platform_machine" || token == "platform.machine") return env.machine;
    if (token == "platform_python_implementation" || token == "platform.python_implementation" ||
        token == "python_implementation")
      return std::string("CPython");
    if (token == "implementation_name") return std::string("cpython");
    if (token == "extra") return env.extra;
    failed = true;  // platform_release, platform_version: the host's kernel, not knowable here
    return std::nullopt;
  }

  std::optional<bool> comparison() {
    if (peek() == "(") {
      ++at;
      auto inner = disjunction();
      if (peek() != ")") failed = true;
      ++at;
      return inner;
    }
    auto left = value();
    std::string op = at < tokens.size() ? tokens[at++] : "";
    if (op == "not" && peek() == "in") op = "not in", ++at;
    auto right = value();
    if (!left || !right) return std::nullopt;
    if (op == "in") return right->find(*left) != std::string::npos;
    if (op == "not in") return right->find(*left) == std::string::npos;
    // Versions compare as versions (`python_version < "3.8"`), else as text.
    if (valid_version(*left) && (valid_version(*right) || right->ends_with(".*")))
      if (auto holds = specifier_holds(*left, op + *right)) return holds;
    if (op == "==" || op == "===") return *left == *right;
    if (op == "!=") return *left != *right;
    failed = true;
    return std::nullopt;
  }

  std::optional<bool> conjunction() {
    auto result = comparison();
    while (peek() == "and") {
      ++at;
      auto next = comparison();
      if (result && next)
        result = *result && *next;
      else if ((result && !*result) || (next && !*next))
        result = false;
      else
        result = std::nullopt;
    }
    return result;
  }

  std::optional<bool> disjunction() {
    auto result = conjunction();
    while (peek() == "or") {
      ++at;
      auto next = conjunction();
      if (result && next)
        result = *result || *next;
      else if ((result && *result) || (next && *next))
        result = true;
      else
        result = std::nullopt;
    }
    return result;
  }
};

std::vector<std::string> marker_tokens(const std::string& marker) {
  static const re2::RE2 token(
      R"(^\s*("[^"]*"|'[^']*'|===|==|!=|<=|>=|~=|<|>|\(|\)|[A-Za-z_][A-Za-z0-9_.]*))");
  std::vector<std::string> tokens;
  re2::StringPiece rest(marker);
  std::string t;
  while (re2::RE2::Consume(&rest, token, &t)) tokens.push_back(t);
  if (!trim(std::string(rest.data(), rest.size())).empty()) tokens.push_back("\x01");  // unreadable
  return tokens;
}

std::string normalized_extra(const std::string& name) { return normalize_distribution_name(name); }

// --- requirements files -----------------------------------------------------------------------

// A requirements file's logical lines: continuations joined, comments dropped, with the line
// number each starts on.
std::vector<std::pair<int, std::string>> logical_lines(const std::string& text) {
  static const re2::RE2 comment(R"((^|\s)#.*$)");
  std::vector<std::pair<int, std::string>> lines;
  std::istringstream in(text);
  std::string line, joined;
  int start = 0;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (joined.empty()) start = number;
    if (!line.empty() && line.back() == '\\') {
      joined += line.substr(0, line.size() - 1);
      continue;
    }
    joined += line;
    re2::RE2::Replace(&joined, comment, "");
    if (!trim(joined).empty()) lines.emplace_back(start, trim(joined));
    joined.clear();
  }
  return lines;
}

// Options of a requirements line that take a value, and what pip does with them here.
std::pair<std::string, std::string> option_and_value(const std::string& line) {
  static const re2::RE2 option(R"(^(--?[A-Za-z-]+)(?:\s*=\s*|\s+)?(.*)$)");
  std::string name, value;
  re2::RE2::FullMatch(line, option, &name, &value);
  // -rfile: a short option glued to its value.
  if (name.size() > 2 && name[1] != '-') {
    value = name.substr(2) + value;
    name = name.substr(0, 2);
  }
  return {name, trim(value)};
}

}  // namespace

MarkerEnvironment MarkerEnvironment::of(const ModuleIndex& index) {
  MarkerEnvironment env;
  env.python_full_version = index.python_version;
  return env;
}

std::optional<bool> marker_holds(const std::string& marker, const MarkerEnvironment& env) {
  MarkerParser parser{marker_tokens(marker), 0, env};
  auto result = parser.disjunction();
  if (parser.failed || parser.at != parser.tokens.size()) return std::nullopt;
  return result;
}

std::optional<Requirement> parse_requirement(const std::string& line_in) {
  // Per-requirement options (--hash, --config-settings...) end the requirement.
  static const re2::RE2 options(R"(\s+--?[A-Za-z].*$)");
  std::string line = line_in;
  re2::RE2::Replace(&line, options, "");
  line = trim(line);
  Requirement r;
  r.text = line;
  std::string before_marker = line;
  // A marker follows ';' (after a URL, "; " with a space before it).
  if (auto semi = line.find(';'); semi != std::string::npos) {
    before_marker = trim(line.substr(0, semi));
    r.marker = trim(line.substr(semi + 1));
  }
  if (before_marker.empty()) return std::nullopt;
  if (before_marker.find("://") != std::string::npos || before_marker.starts_with("git+") ||
      before_marker.starts_with("hg+") || before_marker.starts_with("svn+") ||
      before_marker.starts_with("bzr+")) {
    const bool file_url = before_marker.find("file:") != std::string::npos;
    static const re2::RE2 named(R"(^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*@)");
    re2::RE2::PartialMatch(before_marker, named, &r.name);
    r.local = file_url;
    r.remote = !file_url;
    return r;
  }
  if (before_marker.starts_with(".") || before_marker.starts_with("/") || before_marker.starts_with("~") ||
      before_marker.ends_with(".whl") || before_marker.ends_with(".tar.gz") ||
      before_marker.ends_with(".zip") || before_marker.find('/') != std::string::npos) {
    r.local = true;
    return r;
  }
  static const re2::RE2 pep508(
      R"(^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[([^\]]*)\])?\s*\(?\s*((?:(?:===|==|!=|<=|>=|~=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*,?\s*)*)\)?$)");
  std::string extras;
  if (!re2::RE2::FullMatch(before_marker, pep508, &r.name, &extras, &r.specifier)) return std::nullopt;
  r.specifier = trim(r.specifier);
  std::istringstream parts(extras);
  for (std::string extra; std::getline(parts, extra, ',');)
    if (!trim(extra).empty()) r.extras.push_back(trim(extra));
  return r;
}

RequirementsFile read_requirements(
    const std::string& path, const std::function<std::optional<std::string>(const std::string&)>& read) {
  RequirementsFile result;
  std::set<std::string> seen;
  std::function<void(const std::string&, int)> include = [&](const std::string& file, int depth) {
    if (!seen.insert(fs::path(file).lexically_normal().generic_string()).second || depth > 8) return;
    auto text = read(file);
    if (!text) {
      result.unreadable.push_back(file);
      return;
    }
    const fs::path folder = fs::path(file).parent_path();
    for (const auto& [number, line] : logical_lines(*text)) {
      if (line[0] == '-') {
        auto [name, value] = option_and_value(line);
        if (name == "-r" || name == "--requirement") {
          const fs::path next(value);
          include(next.is_absolute() || folder.empty() ? value : (folder / next).generic_string(), depth + 1);
        } else if (name == "-e" || name == "--editable") {
          auto r = parse_requirement(value);
          if (!r) {
            r.emplace();
            r->text = value;  // a folder or URL pip installs as it is
          }
          r->where = {file, number, 0};
          result.requirements.push_back(*r);
        } else if (name == "--no-index") {
          result.no_index = true;
        }
        continue;  // -c constraints, index and find-links options, --pre...
      }
      if (line.find("${") != std::string::npos) {  // pip expands the environment here
        result.unreadable.push_back(fmt::format("{}:{}", file, number));
        continue;
      }
      auto r = parse_requirement(line);
      if (!r) {
        result.unreadable.push_back(fmt::format("{}:{}", file, number));
        continue;
      }
      r->where = {file, number, 0};
      result.requirements.push_back(std::move(*r));
    }
  };
  include(path, 0);
  return result;
}

std::vector<Unmet> unmet_requirements(const std::vector<Requirement>& wanted, const ModuleIndex& index,
                                      bool no_deps) {
  std::vector<Unmet> unmet;
  std::set<std::string> checked;  // name[extra] already followed
  const MarkerEnvironment base = MarkerEnvironment::of(index);
  std::function<void(const Requirement&, const Requirement&, const std::string&, int)> check =
      [&](const Requirement& r, const Requirement& asked, const std::string& extra, int depth) {
        if (r.local) return;
        if (r.remote) {
          unmet.push_back({asked, "which is downloaded from its URL"});
          return;
        }
        if (!r.marker.empty()) {
          MarkerEnvironment env = base;
          env.extra = extra;
          // A marker that cannot be read counts as met (pip would say more than we can).
          if (!marker_holds(r.marker, env).value_or(false)) return;
        }
        const Distribution* dist = index.distribution(r.name);
        if (!dist) {
          unmet.push_back({asked, depth ? fmt::format("which needs {}, and the image has no distribution {}",
                                                      r.text, r.name)
                                        : fmt::format("the image has no distribution {}", r.name)});
          return;
        }
        if (!specifier_holds(dist->version, r.specifier).value_or(true)) {
          unmet.push_back({asked, fmt::format("{}the image has {} {}",
                                              depth ? fmt::format("which needs {}, and ", r.text) : "",
                                              dist->name, dist->version)});
          return;
        }
        if (no_deps || depth > 16) return;
        std::vector<std::string> extras = {""};
        for (const auto& e : r.extras) extras.push_back(normalized_extra(e));
        for (const auto& e : extras) {
          if (!checked.insert(normalize_distribution_name(r.name) + "[" + e + "]").second) continue;
          for (const auto& line : dist->requirements) {
            auto dep = parse_requirement(line);
            if (!dep || dep->name.empty()) continue;
            // Only the extra's own dependencies for an extra; the plain ones for "".
            const bool for_extra = dep->marker.find("extra") != std::string::npos;
            if (for_extra != !e.empty()) continue;
            check(*dep, asked, e, depth + 1);
          }
        }
      };
  for (const auto& r : wanted) {
    if (r.marker.empty() || marker_holds(r.marker, base).value_or(false) || r.local || r.remote)
      check(r, r, "", 0);
  }
  return unmet;
}

std::vector<model::Finding> requirement_findings(const fs::path& code_dir, const ModuleIndex& index,
                                                 const std::vector<fs::path>& installed_by_setup) {
  std::vector<model::Finding> findings;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(code_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("requirements", 0) == 0 && entry.path().extension() == ".txt")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  const MarkerEnvironment env = MarkerEnvironment::of(index);
  for (const auto& file : files) {
    const fs::path relative = file.lexically_relative(code_dir);
    if (std::find(installed_by_setup.begin(), installed_by_setup.end(), relative) != installed_by_setup.end())
      continue;
    for (const auto& [number, line] : logical_lines(read_code_file(code_dir, relative).value_or(""))) {
      if (line[0] == '-') continue;
      auto r = parse_requirement(line);
      if (!r || r->name.empty() || r->specifier.empty()) continue;
      if (!r->marker.empty() && !marker_holds(r->marker, env).value_or(false)) continue;
      const Distribution* dist = index.distribution(r->name);
      if (!dist || specifier_holds(dist->version, r->specifier).value_or(true)) continue;
      // Its stage is init (checks.yaml): the job starts with the image's version.
      auto f =
          static_finding("requirement-not-in-image", model::Severity::Warning, relative.string(), number);
      f.subject = r->name;
      f.message = fmt::format("{} asks for {}{}, and the image has {} {}", relative.string(), r->name,
                              r->specifier, dist->name, dist->version);
      f.hint = fmt::format(
          "The job runs with {} {} unless it installs its own: check that the code works with it, or choose "
          "an image with the version it needs (preflight image inspect lists them).",
          dist->name, dist->version);
      findings.push_back(std::move(f));
    }
  }
  return findings;
}

}  // namespace preflight::check
