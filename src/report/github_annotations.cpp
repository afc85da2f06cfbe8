#include "report/ci_reports.hpp"
#include "util/text.hpp"

namespace preflight::report {
namespace {

// GitHub's workflow-command escaping: the message may not hold a raw '%', carriage return or
// newline; a property value also not the ':' and ',' that separate properties.
std::string escaped(const std::string& text, bool property) {
  std::string out;
  for (const char c : text) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else if (property && c == ':')
      out += "%3A";
    else if (property && c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
}

const char* command_of(model::Severity severity) {
  switch (severity) {
    case model::Severity::Error:
      return "error";
    case model::Severity::Warning:
      return "warning";
    case model::Severity::Info:
      return "notice";
  }
  return "error";
}

}  // namespace

void print_annotations(const Report& report, const std::filesystem::path& workspace, std::ostream& out) {
  for (const auto& f : report.findings) {
    const SourceLocation place = place_of(report, f);
    std::filesystem::path file = place.file.lexically_normal();
    if (auto relative = workspace.empty() ? std::nullopt : relative_within(file, workspace)) file = *relative;
    out << "::" << command_of(f.severity) << " file=" << escaped(file.generic_string(), true);
    if (place.line > 0) out << ",line=" << place.line;
    if (place.column > 0) out << ",col=" << place.column;
    out << ",title=" << escaped(f.category, true) << "::" << escaped(model::message_and_hint(f), false)
        << "\n";
  }
}

}  // namespace preflight::report
