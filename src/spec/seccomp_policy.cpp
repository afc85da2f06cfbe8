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

const std::vector<std::string> kPolicyKeys = {"description", "otherwise", "allow", "deny"};
const std::vector<std::string> kDenyKeys = {"syscalls", "errno", "when"};
const std::vector<std::string> kAllowKeys = {"syscalls", "when"};
const std::vector<std::string> kWhenKeys = {"arg", "any_of", "none_of", "one_of"};

// The errors a refused call may return: what runtimes' profiles use.
const std::vector<std::pair<std::string, int>> kErrnos = {
    {"EPERM", EPERM}, {"EACCES", EACCES}, {"ENOSYS", ENOSYS}};

// A number as flags and constants are written in C headers: decimal, or 0x hexadecimal.
Result<std::uint64_t> read_number(const YamlDoc& doc, const YamlField& field, const YAML::Node& node) {
  const YamlField one{field.key, field.path, field.key_node, node};
  auto text = doc.string(one);
  if (!text) return std::move(text).error();
  std::uint64_t value = 0;
  const bool hex = text->rfind("0x", 0) == 0;
  const char* begin = text->data() + (hex ? 2 : 0);
  const char* end = text->data() + text->size();
  const auto [stop, failed] = std::from_chars(begin, end, value, hex ? 16 : 10);
  if (failed != std::errc{} || stop != end || begin == end)
    return doc.error(one, fmt::format("expected a number such as 2 or 0x10000000, got \"{}\"", *text));
  return value;
}

Status read_test(const YamlDoc& doc, const YamlField& field, SeccompCondition& when) {
  if (field.key == "one_of") {
    if (!field.value.IsSequence())
      return doc.error(field, "expected a list of values, got " + describe(field.value));
    if (field.value.size() == 0) return doc.error(field, "list at least one value");
    when.test = SeccompCondition::Test::OneOf;
    for (const YAML::Node& item : field.value) {
      auto value = read_number(doc, field, item);
      if (!value) return std::move(value).error();
      when.values.push_back(*value);
    }
    return Ok{};
  }
  auto mask = read_number(doc, field, field.value);
  if (!mask) return std::move(mask).error();
  if (*mask == 0) return doc.error(field, "expected flags, not 0");
  when.test = field.key == "any_of" ? SeccompCondition::Test::AnyBit : SeccompCondition::Test::NoBit;
  when.mask = *mask;
  return Ok{};
}

Result<SeccompCondition> read_when(const YamlDoc& doc, const YamlField& section) {
  auto fields = doc.fields(section, kWhenKeys);
  if (!fields) return std::move(fields).error();
  SeccompCondition when;
  std::optional<unsigned> arg;
  int tests = 0;
  for (const YamlField& field : *fields) {
    if (field.key != "arg") {
      ++tests;
      if (auto ok = read_test(doc, field, when); !ok) return std::move(ok).error();
      continue;
    }
    auto index = read_number(doc, field, field.value);
    if (!index) return std::move(index).error();
    if (*index > 5) return doc.error(field, "expected an argument's index, 0 to 5");  // six arguments
    arg = static_cast<unsigned>(*index);
  }
  if (!arg || tests != 1)
    return doc.error(
        section,
        "give the argument's index and one test: {arg: 0, any_of: 0x10000000}, none_of: or one_of: [...]");
  when.arg = *arg;
  return when;
}

Result<SeccompRule> read_rule(const YamlDoc& doc, const YamlField& entry, bool allow) {
  auto fields = doc.fields(entry, allow ? kAllowKeys : kDenyKeys);
  if (!fields) return std::move(fields).error();
  SeccompRule rule;
  rule.allow = allow;
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
    } else {
      auto when = read_when(doc, field);
      if (!when) return std::move(when).error();
      rule.when = std::move(*when);
    }
  }
  if (rule.syscalls.empty())
    return doc.error(
        entry, fmt::format("name the system calls it {}: syscalls: [...]", allow ? "allows" : "refuses"));
  return rule;
}

Status read_rules(const YamlDoc& doc, const YamlField& field, SeccompPolicy& policy) {
  if (!field.value.IsSequence())
    return doc.error(field, "expected a list of rules, got " + describe(field.value));
  for (std::size_t i = 0; i < field.value.size(); ++i) {
    const YamlField entry{field.key, fmt::format("{}[{}]", field.key, i), field.key_node, field.value[i]};
    auto rule = read_rule(doc, entry, field.key == "allow");
    if (!rule) return std::move(rule).error();
    policy.rules.push_back(std::move(*rule));
  }
  return Ok{};
}

Result<SeccompPolicy> load_policy_file(const fs::path& file) {
  auto doc = YamlDoc::load(file);
  if (!doc) return std::move(doc).error();
  auto fields = doc->fields(doc->root(), "", kPolicyKeys);
  if (!fields) return std::move(fields).error();
  SeccompPolicy policy;
  policy.name = file.stem().string();
  const YamlField* allow = nullptr;
  for (const YamlField& field : *fields) {
    if (field.key == "description") {
      auto value = doc->string(field);
      if (!value) return std::move(value).error();
      policy.description = std::move(*value);
    } else if (field.key == "otherwise") {
      auto number = doc->choice(field, kErrnos, "error");
      if (!number) return std::move(number).error();
      policy.otherwise_errno = *number;
    } else {
      if (field.key == "allow") allow = &field;
      if (auto ok = read_rules(*doc, field, policy); !ok) return std::move(ok).error();
    }
  }
  // Without `otherwise`, every call is allowed already: an allow rule would say nothing.
  if (allow && !policy.otherwise_errno)
    return doc->error(*allow, "an allow list refuses the other calls: add otherwise: EPERM");
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
