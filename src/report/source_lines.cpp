#include <algorithm>

#include "report/html_report.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::report {
namespace {

namespace fs = std::filesystem;

// The lines first..last of `text`, each cut at kMaxSourceLineChars characters (on a UTF-8
// boundary) and without the carriage return of a CRLF file.
std::vector<std::string> lines_of(const std::string& text, int first, int last) {
  std::vector<std::string> out;
  first = std::max(first, 1);
  int number = 1;
  for (std::size_t at = 0; at < text.size() && number <= last; ++number) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (number >= first) {
      std::string_view line(text.data() + at, end - at);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      std::size_t cut = 0, chars = 0;
      while (cut < line.size() && chars < kMaxSourceLineChars) {
        cut += std::max<std::size_t>(utf8_char_length(line, cut), 1);
        ++chars;
      }
      out.emplace_back(line.substr(0, cut));
      if (cut < line.size()) out.back() += "…";
    }
    at = end + 1;
  }
  return out;
}

bool has_parent_step(const fs::path& file) {
  return std::any_of(file.begin(), file.end(), [](const fs::path& part) { return part == ".."; });
}

}  // namespace

SourceLines source_lines_below(const fs::path& code_dir, const fs::path& job_file) {
  return [code_dir, job_file](const fs::path& file, int first, int last) -> std::vector<std::string> {
    if (file.empty() || last < std::max(first, 1)) return {};
    std::optional<std::string> text;
    // A finding in the job file names it as the user did, relative to the working folder.
    std::error_code error;
    const fs::path absolute = fs::absolute(file, error).lexically_normal();
    if (!job_file.empty() && !error && absolute == job_file.lexically_normal()) {
      auto read = read_regular_file(job_file, kMaxSourceBytes);
      if (read) text = std::move(*read);
    } else if (!file.is_absolute() && !has_parent_step(file)) {
      text = read_code_file(code_dir, file, kMaxSourceBytes);
    }
    return text ? lines_of(*text, first, last) : std::vector<std::string>{};
  };
}

}  // namespace preflight::report
