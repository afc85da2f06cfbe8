#include "spec/yaml_doc.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>

#include "spec/platform_profile.hpp"
#include "spec/yaml_bounds.hpp"
#include "util/data_dir.hpp"
#include "util/did_you_mean.hpp"
#include "util/input_bounds.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::spec {

namespace {

std::string in_map(const std::string& path) { return path.empty() ? "" : " in " + path; }

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : ", ") + word;
  return out;
}

}  // namespace

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Scalar: {
      // Long values (a whole script) would drown the message.
      const std::string& text = node.Scalar();
      const bool long_text = text.size() > 60 || text.find('\n') != std::string::npos;
      return "\"" +
             (long_text ? text.substr(0, std::min<std::size_t>(40, text.find('\n'))) + "...\"" : text + "\"");
    }
    default:
      return "nothing";
  }
}

bool is_identifier(const std::string& text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

Result<std::string> read_definition(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return Error::bad_input(file.string() + " does not exist");
  if (std::filesystem::is_directory(file, ec))
    return Error::bad_input(file.string() + " is a folder, not a job definition or profile");
  // It may come from a stranger's repository: a regular file of a sane size, never a FIFO or
  // a device that would hang or fill Preflight.
  auto text = read_regular_file(file, kMaxDefinitionBytes);
  if (!text)
    return Error::bad_input(text.error().message +
                            "; a job file, profile or job definition is a file of at most " +
                            human_size(kMaxDefinitionBytes));
  return text;
}

Result<YamlDoc> YamlDoc::load(const std::filesystem::path& file) {
  auto text = read_definition(file);
  if (!text) return std::move(text).error();
  return parse(*text, file);
}

Result<YamlDoc> YamlDoc::parse(const std::string& text, const std::filesystem::path& file) {
  // YAML is printable Unicode, and what it holds ends up in JSON (the platform's files,
  // reports): a byte that is not UTF-8, or a control character (which yaml-cpp reads as
  // something else: a NUL became 0xA0), is refused here, where it can be pointed at.
  int line = 1, column = 1;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = utf8_char_length(text, at);
    const auto byte = static_cast<unsigned char>(text[at]);
    if (length == 0)
      return Error::bad_input(
          fmt::format("not UTF-8: the byte 0x{:02X} begins no character; save the file as UTF-8", byte),
          SourceLocation{file, line, column});
    if ((byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') || byte == 0x7F)
      return Error::bad_input(
          fmt::format("the control character 0x{:02X} cannot be in a YAML file; remove it", byte),
          SourceLocation{file, line, column});
    if (text[at] == '\n') {
      ++line;
      column = 0;
    }
    ++column;
    at += length;
  }
  YamlDoc doc;
  doc.file_ = file;
  doc.text_ = text;
  // The bounds take a parse of their own, a third of a warm run's own time when it was done
  // for the shipped policies too (docs/benchmarks.md): Preflight's own files are not a
  // stranger's, and their tests hold them to one document.
  if (!is_shipped(file))
    if (auto bounded = check_yaml_bounds(text, file); !bounded) return std::move(bounded).error();
  try {
    doc.root_ = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Error::bad_input("invalid YAML: " + e.msg, yaml_location(file, e.mark));
  }
  return doc;
}

SourceLocation YamlDoc::at(const YAML::Node& node) const { return yaml_location(file_, node.Mark()); }

SourceLocation YamlDoc::at(const YamlField& field) const {
  return field.value.IsNull() ? at(field.key_node) : at(field.value);
}

SourceLocation YamlDoc::text_at(const YAML::Node& node, bool* exact) const {
  SourceLocation where = at(node);
  *exact = false;
  const YAML::Mark mark = node.Mark();
  if (!node.IsScalar() || mark.is_null() || mark.pos < 0) return where;
  const auto pos = static_cast<std::size_t>(mark.pos);
  const std::string& scalar = node.Scalar();
  if (pos >= text_.size() || scalar.find('\n') != std::string::npos) return where;
  const char first = text_[pos];
  if (first == '"' || first == '\'') {
    // Column arithmetic holds only when the source is the value verbatim (no escapes).
    if (text_.compare(pos + 1, scalar.size(), scalar) == 0 && pos + 1 + scalar.size() < text_.size() &&
        text_[pos + 1 + scalar.size()] == first) {
      where.column += 1;
      *exact = true;
    }
  } else if (first != '|' && first != '>') {
    *exact = text_.compare(pos, scalar.size(), scalar) == 0;
  }
  return where;
}

Result<std::vector<YamlField>> YamlDoc::fields(const YAML::Node& map, const std::string& path,
                                               const std::vector<std::string>& allowed) const {
  if (!map.IsMap()) {
    std::string what = path.empty() ? "the top level" : path;
    return Error::bad_input(what + ": expected a map of keys, got " + describe(map), at(map));
  }
  std::vector<YamlField> out;
  std::map<std::string, YAML::Node> seen;
  for (const auto& entry : map) {
    const YAML::Node key = entry.first;
    if (!key.IsScalar()) {
      return Error::bad_input("expected a plain key" + in_map(path) + ", got " + describe(key), at(key));
    }
    const std::string& name = key.Scalar();
    if (auto previous = seen.find(name); previous != seen.end()) {
      return Error::bad_input("duplicate key \"" + name + "\"" + in_map(path) + " (first given on line " +
                                  std::to_string(at(previous->second).line) + ")",
                              at(key));
    }
    seen.emplace(name, key);
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string hint = did_you_mean(name, allowed);
      if (hint.empty() && allowed.size() <= 8) hint = " (valid keys: " + join(allowed) + ")";
      return Error::bad_input("unknown key \"" + name + "\"" + in_map(path) + hint, at(key));
    }
    out.push_back(YamlField{name, path.empty() ? name : path + "." + name, key, entry.second});
  }
  return out;
}

Result<std::vector<YamlField>> YamlDoc::fields(const YamlField& field,
                                               const std::vector<std::string>& allowed) const {
  if (field.value.IsNull()) return std::vector<YamlField>{};
  if (!field.value.IsMap()) {
    return error(field, "expected a map of keys, got " + describe(field.value));
  }
  return fields(field.value, field.path, allowed);
}

Error YamlDoc::error(const YamlField& field, const std::string& message) const {
  return Error::bad_input(field.path + ": " + message, at(field));
}

Result<std::string> YamlDoc::string(const YamlField& field) const {
  if (!field.value.IsScalar()) return error(field, "expected a string, got " + describe(field.value));
  if (field.value.Scalar().find('\0') != std::string::npos)
    return error(field, "holds a NUL character (\\0), which no command, path or environment value can hold");
  return field.value.Scalar();
}

Result<std::size_t> YamlDoc::index_of(const YamlField& field, const std::vector<std::string>& allowed,
                                      std::string_view what) const {
  auto text = string(field);
  if (!text) return std::move(text).error();
  const auto found = std::find(allowed.begin(), allowed.end(), *text);
  if (found != allowed.end()) return static_cast<std::size_t>(found - allowed.begin());
  // A long list is noise next to a suggestion; without one, it is the only help.
  constexpr std::size_t kListedNames = 12;
  const std::string suggestion = did_you_mean(*text, allowed);
  const std::string listed = suggestion.empty() || allowed.size() <= kListedNames
                                 ? fmt::format(" (one of {})", fmt::join(allowed, ", "))
                                 : "";
  return error(field, fmt::format("unknown {} \"{}\"{}{}", what, *text, suggestion, listed));
}

Result<std::string> YamlDoc::one_of(const YamlField& field, const std::vector<std::string>& allowed,
                                    std::string_view what) const {
  auto index = index_of(field, allowed, what);
  if (!index) return std::move(index).error();
  return allowed[*index];
}

Result<long long> YamlDoc::integer(const YamlField& field) const {
  if (!field.value.IsScalar()) {
    return error(field, "expected an integer, got " + describe(field.value));
  }
  const std::string& text = field.value.Scalar();
  const char* begin = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  long long value = 0;
  auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) return error(field, "\"" + text + "\" is too large");
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return error(field, "expected an integer, got " + describe(field.value));
  }
  return value;
}

Result<double> YamlDoc::number(const YamlField& field) const {
  if (!field.value.IsScalar()) return error(field, "expected a number, got " + describe(field.value));
  const std::string& text = field.value.Scalar();
  const char* begin = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  double value = 0;
  auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return error(field, "expected a number, got " + describe(field.value));
  }
  return value;
}

Result<std::uint64_t> YamlDoc::size(const YamlField& field) const {
  auto text = string(field);
  if (!text) return std::move(text).error();
  auto bytes = parse_size(*text);
  if (!bytes) return error(field, bytes.error().message);
  return *bytes;
}

Result<bool> YamlDoc::boolean(const YamlField& field) const {
  if (field.value.IsScalar()) {
    std::string text = field.value.Scalar();
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // YAML 1.1's spellings too, as yaml-cpp and PyYAML read them.
    if (text == "true" || text == "yes" || text == "on") return true;
    if (text == "false" || text == "no" || text == "off") return false;
  }
  return error(field, "expected true or false, got " + describe(field.value));
}

Result<std::vector<std::string>> YamlDoc::string_list(const YamlField& field) const {
  if (!field.value.IsSequence()) {
    return error(field, "expected a list of strings, got " + describe(field.value));
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < field.value.size(); ++i) {
    const YAML::Node item = field.value[i];
    if (!item.IsScalar()) {
      return Error::bad_input(
          field.path + "[" + std::to_string(i) + "]: expected a string, got " + describe(item), at(item));
    }
    if (item.Scalar().find('\0') != std::string::npos)
      return Error::bad_input(field.path + "[" + std::to_string(i) + "]: holds a NUL character (\\0)",
                              at(item));
    out.push_back(item.Scalar());
  }
  return out;
}

}  // namespace preflight::spec
