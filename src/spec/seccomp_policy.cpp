#include "spec/seccomp_policy.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <set>
#include <utility>

#include "spec/yaml_doc.hpp"
#include "util/data_dir.hpp"
#include "util/did_you_mean.hpp"

namespace preflight::spec {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kPolicyKeys = {"description", "deny"};
const std::vector<std::string> kRuleKeys = {"syscalls", "errno", "flags"};
const std::vector<std::string> kFlagKeys = {"arg", "any_of"};

// The errors a refused call may return: what runtimes' profiles use.
const std::vector<std::pair<std::string, int>> kErrnos = {
    {"EPERM", EPERM}, {"EACCES", EACCES}, {"ENOSYS", ENOSYS}};

Status read_flags(const YamlDoc& doc, const YamlField& section, SeccompRule& rule) {
  auto fields = doc.fields(section, kFlagKeys);
  if (!fields) return std::move(fields).error();
  std::optional<unsigned> arg;
  std::uint64_t mask = 0;
  for (const YamlField& field : *fields) {
    auto text = doc.string(field);
    if (!text) return std::move(text).error();
    // Decimal, or hexadecimal as flags are written in C headers (0x10000000).
    std::uint64_t value = 0;
    const bool hex = text->rfind("0x", 0) == 0;
    const char* begin = text->data() + (hex ? 2 : 0);
    const char* end = text->data() + text->size();
    const auto [stop, failed] = std::from_chars(begin, end, value, hex ? 16 : 10);
    if (failed != std::errc{} || stop != end || begin == end)
      return doc.error(field, fmt::format("expected a number such as 2 or 0x10000000, got \"{}\"", *text));
    if (field.key == "any_of") {
      mask = value;
    } else if (value <= 5) {  // a system call has six arguments
      arg = static_cast<unsigned>(value);
    } else {
      return doc.error(field, "expected an argument's index, 0 to 5");
    }
  }
  if (!arg || mask == 0)
    return doc.error(section, "give the argument's index and the flags: {arg: 0, any_of: 0x10000000}");
  rule.flags_arg = arg;
  rule.any_flag = mask;
  return Ok{};
}

Result<SeccompRule> read_rule(const YamlDoc& doc, const YamlField& entry) {
  auto fields = doc.fields(entry, kRuleKeys);
  if (!fields) return std::move(fields).error();
  SeccompRule rule;
  for (const YamlField& field : *fields) {
    if (field.key == "syscalls") {
      auto names = doc.string_list(field);
      if (!names) return std::move(names).error();
      for (const std::string& name : *names) {
        if (!is_identifier(name))
          return doc.error(field, fmt::format("\"{}\" is not a system call's name", name));
      }
      rule.syscalls = std::move(*names);
    } else if (field.key == "errno") {
      auto number = doc.choice(field, kErrnos, "error");
      if (!number) return std::move(number).error();
      rule.errno_value = *number;
    } else if (auto ok = read_flags(doc, field, rule); !ok) {
      return std::move(ok).error();
    }
  }
  if (rule.syscalls.empty()) return doc.error(entry, "name the system calls it refuses: syscalls: [...]");
  return rule;
}

Result<SeccompPolicy> load_policy_file(const fs::path& file) {
  auto doc = YamlDoc::load(file);
  if (!doc) return std::move(doc).error();
  auto fields = doc->fields(doc->root(), "", kPolicyKeys);
  if (!fields) return std::move(fields).error();
  SeccompPolicy policy;
  policy.name = file.stem().string();
  for (const YamlField& field : *fields) {
    if (field.key == "description") {
      auto value = doc->string(field);
      if (!value) return std::move(value).error();
      policy.description = std::move(*value);
      continue;
    }
    if (!field.value.IsSequence())
      return doc->error(field, "expected a list of rules, got " + describe(field.value));
    for (std::size_t i = 0; i < field.value.size(); ++i) {
      const YamlField entry{field.key, fmt::format("deny[{}]", i), field.key_node, field.value[i]};
      auto rule = read_rule(*doc, entry);
      if (!rule) return std::move(rule).error();
      policy.rules.push_back(std::move(*rule));
    }
  }
  return policy;
}

}  // namespace

fs::path shipped_seccomp_dir() { return data_dir() / "policies" / "seccomp"; }

std::vector<std::string> list_seccomp_policies(const fs::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".yaml")
      names.insert(it->path().stem().string());
  }
  return {names.begin(), names.end()};
}

Result<SeccompPolicy> load_seccomp_policy(const std::string& name, const fs::path& dir) {
  const std::vector<std::string> shipped = list_seccomp_policies(dir);
  for (const std::string& known : shipped) {
    if (known == name) return load_policy_file(dir / (name + ".yaml"));
  }
  return Error::bad_input(fmt::format("unknown seccomp policy \"{}\"{} (shipped in {}: {})", name,
                                      did_you_mean(name, shipped), dir.string(), fmt::join(shipped, ", ")));
}

}  // namespace preflight::spec
