#include "report/html_text.hpp"

#include <fmt/format.h>

#include <cmath>

#include "util/text.hpp"

namespace preflight::report {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = utf8_char_length(text, at);
    const auto lead = static_cast<unsigned char>(text[at]);
    // C0 controls but tab and newline, DEL, and the C1 controls (U+0080..U+009F).
    const bool control = (length == 1 && ((lead < 0x20 && lead != '\t' && lead != '\n') || lead == 0x7F)) ||
                         (length == 2 && lead == 0xC2 && static_cast<unsigned char>(text[at + 1]) < 0xA0);
    if (length == 0 || control) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      at += length == 0 ? 1 : length;
      continue;
    }
    switch (text[at]) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.append(text.substr(at, length));
    }
    at += length;
  }
  return out;
}

std::string grouped(long long number) {
  const std::string digits = std::to_string(number < 0 ? -(number + 1) + 1ULL : number + 0ULL);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return number < 0 ? "-" + out : out;
}

}  // namespace preflight::report
