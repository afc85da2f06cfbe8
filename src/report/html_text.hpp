// What the HTML report's parts share: escaping of hostile text, and numbers written for people.
#pragma once

#include <string>
#include <string_view>

namespace preflight::report {

// `text` safe as HTML content and as a quoted attribute value: & < > " ' become references,
// control characters (but tab and newline) and malformed UTF-8 become U+FFFD.
std::string html_escape(std::string_view text);

// "0 s", "12 µs", "4.0 ms", "250 ms", "1.50 s", "12.5 s", "4.2 min", "3.5 h".
std::string readable_seconds(double seconds);

// "13,132": thousands separated, whatever the locale.
std::string grouped(long long number);

}  // namespace preflight::report
