#include <fmt/format.h>

#include <map>
#include <span>
#include <string_view>

#include "report/ci_reports.hpp"
#include "util/text.hpp"

namespace preflight::report {
namespace {

// The length of the well-formed UTF-8 sequence at `at` that XML 1.0 allows, or 0: no control
// character but tab, newline and carriage return, nor the non-characters U+FFFE and U+FFFF.
std::size_t xml_char_length(std::string_view text, std::size_t at) {
  const std::size_t length = utf8_char_length(text, at);
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  if (length == 1)
    return byte(at) >= 0x20 || byte(at) == '\t' || byte(at) == '\n' || byte(at) == '\r' ? 1 : 0;
  if (length == 3 && byte(at) == 0xEF && byte(at + 1) == 0xBF && byte(at + 2) >= 0xBE) return 0;
  return length;
}

// Text for XML content or a quoted attribute. A job's output can hold any byte, but XML 1.0
// allows no control character but tab, newline and carriage return (not even as a reference)
// and a parser stops at malformed UTF-8: both become U+FFFD. In attributes, tab, newline and
// carriage return are references, since a parser would turn them into spaces.
std::string xml_text(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = xml_char_length(text, at);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++at;
      continue;
    }
    const char c = text[at];
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else if (c == '\'')
      out += "&apos;";
    else if (c == '\r')
      out += "&#13;";
    else if (attribute && c == '\n')
      out += "&#10;";
    else if (attribute && c == '\t')
      out += "&#9;";
    else
      out.append(text.substr(at, length));
    at += length;
  }
  return out;
}

std::string attr(std::string_view text) { return xml_text(text, true); }

std::string seconds(double value) { return fmt::format("{:.3f}", value); }

struct TestCase {
  std::string classname, name, file;
  int line = 0;
  double seconds = 0;
  std::string failure_message, failure_type, failure_text;  // a failure when message is set
  std::string skipped;                                      // skipped when set
  std::string system_out;
};

// A finding as a failure's body: everything the terminal summary says about it.
std::string finding_text(const model::Finding& f) {
  std::string text = f.category + " (" + f.dimension + "; root cause: " + f.root_cause + ")" +
                     model::where_text(f) + "\n" + model::message_and_hint(f) + "\n";
  if (f.severity == model::Severity::Error) text += std::string("retry: ") + to_string(f.retry) + "\n";
  return text;
}

TestCase stage_case(const Report& report, const StageResult& stage, const std::string& suite) {
  TestCase test;
  test.classname = suite + ".stage";
  test.name = stage.name;
  test.seconds = stage.seconds;
  if (stage.status == "not_reached") test.skipped = "not reached: an earlier stage failed";
  if (stage.status == "absent") test.skipped = "absent: the job has no such stage, or it was not recognised";
  if (stage.status != "failed") return test;
  for (const auto& f : report.findings) {
    if (f.severity != model::Severity::Error || f.stage != stage.name) continue;
    if (test.failure_message.empty()) {
      test.failure_message = f.category + model::where_text(f) + ": " + f.message;
      test.failure_type = f.category;
    }
    test.failure_text += finding_text(f);
  }
  if (test.failure_message.empty()) test.failure_message = "the stage failed";
  return test;
}

TestCase finding_case(const model::Finding& f, const std::string& suite, std::map<std::string, int>& seen) {
  TestCase test;
  test.classname = suite + ".finding";
  test.name = f.category + (f.location.known() ? " at " + f.location.str() : "");
  // Names stay unique within the suite, so that CI servers keep each one's history apart.
  if (const int count = ++seen[test.name]; count > 1) test.name += fmt::format(" #{}", count);
  test.file = f.location.file.string();
  test.line = f.location.line;
  if (f.severity == model::Severity::Error) {
    test.failure_message = f.category + model::where_text(f) + ": " + f.message;
    test.failure_type = f.category;
    test.failure_text = finding_text(f);
  } else {
    // A warning passes: CI servers show a test's system-out beside it.
    test.system_out = std::string(to_string(f.severity)) + ": " + finding_text(f);
  }
  return test;
}

void write_case(const TestCase& test, std::string& out) {
  out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{}\"", attr(test.classname),
                     attr(test.name), seconds(test.seconds));
  if (!test.file.empty()) out += fmt::format(" file=\"{}\"", attr(test.file));
  if (test.line > 0) out += fmt::format(" line=\"{}\"", test.line);
  if (test.failure_message.empty() && test.skipped.empty() && test.system_out.empty()) {
    out += "/>\n";
    return;
  }
  out += ">\n";
  if (!test.failure_message.empty())
    out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", attr(test.failure_message),
                       attr(test.failure_type), xml_text(test.failure_text, false));
  if (!test.skipped.empty()) out += fmt::format("      <skipped message=\"{}\"/>\n", attr(test.skipped));
  if (!test.system_out.empty())
    out += fmt::format("      <system-out>{}</system-out>\n", xml_text(test.system_out, false));
  out += "    </testcase>\n";
}

}  // namespace

std::string to_junit(std::span<const Report> reports) {
  struct Suite {
    std::string name;
    const Report* report;
    std::vector<TestCase> tests;
    int failures = 0, skipped = 0;
  };
  std::vector<Suite> suites;
  std::map<std::string, int> suite_names;
  int tests_total = 0, failures_total = 0, skipped_total = 0;
  double seconds_total = 0;
  for (const Report& report : reports) {
    Suite suite{report.job_name + "@" + report.platform, &report, {}};
    // Suite names stay unique, so that CI servers keep each one's history apart.
    if (const int count = ++suite_names[suite.name]; count > 1) suite.name += fmt::format(" #{}", count);
    for (const auto& stage : report.stages) suite.tests.push_back(stage_case(report, stage, suite.name));
    std::map<std::string, int> seen;
    for (const auto& f : report.findings) suite.tests.push_back(finding_case(f, suite.name, seen));
    for (const auto& test : suite.tests) {
      suite.failures += !test.failure_message.empty();
      suite.skipped += !test.skipped.empty();
    }
    tests_total += static_cast<int>(suite.tests.size());
    failures_total += suite.failures;
    skipped_total += suite.skipped;
    seconds_total += report.duration_s;
    suites.push_back(std::move(suite));
  }
  // The totals CI servers read from the elements' attributes rather than count themselves.
  const auto totals = [](std::size_t tests, int failures, int skipped, double time) {
    return fmt::format("tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{}\"", tests,
                       failures, skipped, seconds(time));
  };
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"preflight\" {}>\n",
      totals(static_cast<std::size_t>(tests_total), failures_total, skipped_total, seconds_total));
  for (const Suite& suite : suites) {
    const Report& report = *suite.report;
    out += fmt::format("  <testsuite name=\"{}\" {}>\n", attr(suite.name),
                       totals(suite.tests.size(), suite.failures, suite.skipped, report.duration_s));
    out += "    <properties>\n";
    const std::pair<const char*, std::string> properties[] = {{"verdict", report.verdict},
                                                              {"job.file", report.job_file},
                                                              {"platform", report.platform},
                                                              {"image.ref", report.image_ref},
                                                              {"image.digest", report.image_digest}};
    for (const auto& [name, value] : properties)
      out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, attr(value));
    out += "    </properties>\n";
    for (const auto& test : suite.tests) write_case(test, out);
    std::string notes;
    for (const auto& note : report.notes) notes += "note: " + note + "\n";
    if (!notes.empty()) out += fmt::format("    <system-out>{}</system-out>\n", xml_text(notes, false));
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace preflight::report
