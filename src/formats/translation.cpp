#include "formats/translation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "util/text.hpp"

namespace preflight::formats {

namespace {

// A YAML double-quoted scalar: JSON's string escapes are YAML's too; bytes that are not UTF-8
// become U+FFFD rather than an exception.
std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A literal block keeps a script's lines as they are; a tab is fine in one, other control
// characters (and a carriage return) are not.
bool fits_block(const std::string& text) {
  if (text.find('\n') == std::string::npos) return false;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return false;
    const std::size_t length = utf8_char_length(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

// A key as it is when it needs no quotes (an identifier, a hyperparameter's name), else quoted
// (a cloud path in paths:).
std::string key_text(std::string_view key) {
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  return plain ? std::string(key) : quoted(std::string(key));
}

}  // namespace

void Translation::line(std::string text, SourceLocation from) {
  lines_.push_back(std::move(text));
  origins_.push_back(std::move(from));
}

std::string Translation::said_of(const SourceLocation& from, std::string_view said) const {
  const std::string place = from.known() ? fmt::format("{}:{}", source_.filename().string(), from.line)
                                         : source_.filename().string();
  return said.empty() ? place : fmt::format("{} {}", place, said);
}

void Translation::comment(std::string_view text) { line("# " + std::string(text), {}); }

void Translation::field(int depth, std::string_view key, const Scalar& value, const SourceLocation& from,
                        std::string_view said) {
  const std::string indent(static_cast<std::size_t>(depth) * 2, ' ');
  line(indent + "# " + said_of(from, said), {});
  const std::string name = key_text(key);
  if (value.typed) return line(indent + name + ": " + value.text, from);
  if (!fits_block(value.text)) return line(indent + name + ": " + quoted(value.text), from);
  // "|2": the content is indented two spaces past the key, whatever its first line starts with;
  // the chomping indicator keeps the trailing newlines as written.
  std::string text = value.text;
  std::size_t trailing = 0;
  while (!text.empty() && text.back() == '\n') text.pop_back(), ++trailing;
  const char* chomp = trailing == 0 ? "-" : trailing == 1 ? "" : "+";
  line(indent + name + ": |2" + chomp, from);
  std::size_t number = 0;
  std::size_t start = 0;
  for (;;) {
    const auto end = text.find('\n', start);
    const std::string content =
        text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const SourceLocation& origin = number < value.line_origins.size() ? value.line_origins[number] : from;
    line(content.empty() ? std::string() : indent + "  " + content, origin);
    ++number;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  for (std::size_t i = 1; i < trailing; ++i) line("", from);
}

void Translation::open(int depth, std::string_view key, const SourceLocation& from, std::string_view said) {
  const std::string indent(static_cast<std::size_t>(depth) * 2, ' ');
  if (!said.empty()) line(indent + "# " + said_of(from, said), {});
  line(indent + key_text(key) + ":", from);
}

void Translation::empty_map(int depth, std::string_view key, const SourceLocation& from,
                            std::string_view said) {
  const std::string indent(static_cast<std::size_t>(depth) * 2, ' ');
  line(indent + "# " + said_of(from, said), {});
  line(indent + key_text(key) + ": {}", from);
}

void Translation::unmapped(const SourceLocation& where, std::string_view field, std::string_view why) {
  notes_.push_back(spec::SpecNote{fmt::format("{}: not mapped: {}", field, why), where});
}

std::string Translation::text() const {
  std::string out;
  for (const auto& text : lines_) out += text + "\n";
  if (!notes_.empty()) {
    out += "\n# Not mapped (each also a note in the report):\n";
    for (const auto& note : notes_) {
      std::string message = note.message;
      std::replace(message.begin(), message.end(), '\n', ' ');
      out += "# " + said_of(note.where, message) + "\n";
    }
  }
  return out;
}

SourceLocation Translation::origin(int line) const {
  if (line < 1 || static_cast<std::size_t>(line) > origins_.size()) return {};
  return origins_[static_cast<std::size_t>(line) - 1];
}

}  // namespace preflight::formats
