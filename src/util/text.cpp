#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/untrusted_fs.hpp"

namespace preflight {

std::optional<std::string> read_file(const std::filesystem::path& path) {
  auto text = read_regular_file(path, kMaxReadBytes);
  if (!text) return std::nullopt;
  return std::move(*text);
}

bool is_normal_absolute_path(std::string_view path) {
  if (path.empty() || path[0] != '/' || path.find('\0') != std::string_view::npos) return false;
  if (path == "/") return true;
  if (path.back() == '/') return false;
  for (std::size_t start = 1; start <= path.size();) {
    std::size_t end = std::min(path.find('/', start), path.size());
    const auto part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

bool is_under(const std::string& file, const std::string& dir) {
  if (dir.empty() || file.size() <= dir.size() || file.compare(0, dir.size(), dir) != 0) return false;
  return dir.back() == '/' || file[dir.size()] == '/';
}

std::optional<std::filesystem::path> relative_within(const std::filesystem::path& path,
                                                     const std::filesystem::path& dir) {
  auto relative = path.lexically_normal().lexically_relative(dir.lexically_normal());
  if (relative.empty() || *relative.begin() == "..") return std::nullopt;
  return relative;
}

std::string cut_utf8(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text;
}

std::string human_size(std::uintmax_t bytes) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = bytes / 1024.0;
  int unit = 0;
  for (; value >= 1024 && unit < 3; ++unit) value /= 1024;
  return fmt::format("{:.1f} {}", value, units[unit]);
}

std::string human_duration(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  if (seconds < 0) return "-" + human_duration(-seconds);
  if (seconds == 0) return "0 s";
  if (seconds < 0.001) return fmt::format("{:.0f} µs", seconds * 1e6);
  if (seconds < 0.01) return fmt::format("{:.1f} ms", seconds * 1000);
  if (seconds < 1) return fmt::format("{:.0f} ms", seconds * 1000);
  if (seconds < 10) return fmt::format("{:.1f} s", seconds);
  if (seconds < 90) return fmt::format("{:.0f} s", seconds);
  if (seconds < 90 * 60) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

std::string quote_shell_word(const std::string& word, std::string_view also_plain) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_./:=@%+,-").find(c) != std::string_view::npos ||
           also_plain.find(c) != std::string_view::npos;
  });
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string quote_shell_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : " ") + quote_shell_word(word);
  return out;
}

std::size_t utf8_char_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  const std::size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                             : lead >= 0xE0 && lead <= 0xEF ? 3
                             : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                            : 0;
  if (length == 0 || at + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i)
    if ((byte(at + i) & 0xC0) != 0x80) return 0;
  const unsigned char second = byte(at + 1);
  if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) || (lead == 0xF0 && second < 0x90) ||
      (lead == 0xF4 && second > 0x8F))
    return 0;
  return length;
}

std::string plain_text(std::string_view text) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0x1b && i + 1 < text.size() && (text[i + 1] == '[' || text[i + 1] == ']')) {
      // CSI: parameter and intermediate bytes, then one final byte (0x40-0x7E); OSC: up to BEL
      // or ESC backslash. One cut short at the end of the text is dropped whole.
      const bool csi = text[i + 1] == '[';
      i += 2;
      while (i < text.size()) {
        const auto b = static_cast<unsigned char>(text[i++]);
        if (csi ? (b >= 0x40 && b <= 0x7e) : b == 0x07) break;
        if (!csi && b == 0x1b && i < text.size() && text[i] == '\\') {
          ++i;
          break;
        }
      }
      continue;
    }
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xa0 &&
        static_cast<unsigned char>(text[i + 1]) >= 0x80) {
      out += kReplacement;  // a C1 control character, U+0080-U+009F
      i += 2;
      continue;
    }
    out += text[i++];
  }
  return out;
}

}  // namespace preflight
