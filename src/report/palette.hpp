// ANSI colours for the terminal summaries, or plain text when off (report::use_color).
#pragma once

#include <fmt/format.h>

#include <string>

namespace preflight::report {

struct Palette {
  bool on;
  std::string paint(const std::string& text, const char* code) const {
    return on ? fmt::format("\033[{}m{}\033[0m", code, text) : text;
  }
  std::string red(const std::string& t) const { return paint(t, "31"); }
  std::string green(const std::string& t) const { return paint(t, "32"); }
  std::string yellow(const std::string& t) const { return paint(t, "33"); }
  std::string dim(const std::string& t) const { return paint(t, "2"); }
  std::string bold(const std::string& t) const { return paint(t, "1"); }
};

}  // namespace preflight::report
