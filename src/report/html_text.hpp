// What the HTML report's parts share: escaping of hostile text, and numbers written for people.
#pragma once

#include <string>
#include <string_view>

namespace preflight::report {

// `text` safe as HTML content and as a quoted attribute value: & < > " ' become references,
// control characters (but tab and newline) and malformed UTF-8 become U+FFFD.
std::string html_escape(std::string_view text);

// "13,132": thousands separated, whatever the locale.
std::string grouped(long long number);

}  // namespace preflight::report
