#include "diagnosis/traceback.hpp"

#include <re2/re2.h>

#include "util/text.hpp"

namespace preflight::diagnosis {

namespace {

constexpr const char* kHeader = "Traceback (most recent call last):";

bool indented(const std::string& line) { return !line.empty() && (line[0] == ' ' || line[0] == '\t'); }

}  // namespace

std::optional<int> errno_in(const std::string& message) {
  static const re2::RE2 re(R"(\[Errno (\d+)\])");
  int value = 0;
  if (re2::RE2::PartialMatch(message, re, &value)) return value;
  return std::nullopt;
}

std::string oserror_filename(const std::string& message) {
  static const re2::RE2 re(R"(\[Errno -?\d+\] [^:']*: '([^']*)')");
  std::string path;
  re2::RE2::PartialMatch(message, re, &path);
  return path;
}

std::optional<harness::ExceptionEvent> parse_traceback(const std::vector<std::string>& lines,
                                                       const std::string& code_dir) {
  static const re2::RE2 frame_re(R"re(\s*File "([^"]*)", line (\d+)(?:, in (.*))?)re");
  static const re2::RE2 type_re(R"(([A-Za-z_][\w.]*)(?::\s?(.*))?)");
  std::size_t start = lines.size();
  for (std::size_t i = lines.size(); i-- > 0;) {
    if (lines[i].find(kHeader) != std::string::npos) {
      start = i;
      break;
    }
  }
  if (start == lines.size()) return std::nullopt;

  harness::ExceptionEvent event;
  std::size_t i = start + 1;
  for (; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    harness::Frame frame;
    if (re2::RE2::FullMatch(line, frame_re, &frame.file, &frame.line, &frame.function)) {
      frame.user = is_under(frame.file, code_dir);
      event.frames.push_back(std::move(frame));
    } else if (!indented(line) && !line.empty()) {
      break;  // the "Type: message" line; source lines and carets are indented
    }
  }
  if (i == lines.size() || !re2::RE2::FullMatch(lines[i], type_re, &event.type, &event.message)) {
    return std::nullopt;
  }
  if (event.type.rfind("builtins.", 0) == 0) event.type.erase(0, 9);
  for (++i; i < lines.size() && indented(lines[i]); ++i) event.message += "\n" + lines[i];
  event.errno_value = errno_in(event.message);
  event.path = oserror_filename(event.message);
  return event;
}

}  // namespace preflight::diagnosis
