// The CI formats (JUnit XML, SARIF 2.1.0, GitHub Actions annotations) against golden files
// (tests/golden/), and their escaping of what a job's output can hold.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "report/ci_reports.hpp"
#include "report_fixtures.hpp"
#include "test_support.hpp"
#include "util/text.hpp"

namespace preflight {
namespace {

namespace fs = std::filesystem;

// The golden report: a failed checkpoint, a located warning and a note without a place.
report::Report ci_sample() {
  report::Report r = report::fixtures::sample_report();
  model::Finding warning;
  warning.rule = "dataloader-without-workers";
  warning.category = "Slow Input Pipeline";
  warning.dimension = "Execution Environment";
  warning.root_cause = "Inappropriate Model Parameter/Structure";
  warning.severity = model::Severity::Warning;
  warning.phase = model::Phase::Static;
  warning.stage = "data";
  warning.message = "the DataLoader runs without workers on a GPU job";
  warning.location = {"data/load.py", 7, 12};
  warning.hint = "pass num_workers=4";
  model::Finding note = r.findings[0];
  note.rule = "tmp-not-kept";
  note.prediction = model::Prediction::None;
  note.predicted.clear();
  note.severity = model::Severity::Info;
  note.stage = "";
  note.message = "the platform's /tmp is not kept after the job";
  note.location = {};
  note.hint = "";
  r.findings.push_back(warning);
  r.findings.push_back(note);
  // As the rules file describes the categories among the findings.
  r.categories = {{"Permission Denied",
                   "permission-denied",
                   "Execution Environment",
                   "The job lacked permission. It wrote where the platform allows no writing.",
                   "Write under the outputs.",
                   {}},
                  {"Slow Input Pipeline",
                   "slow-input-pipeline",
                   "Execution Environment",
                   "Loading data keeps the GPU waiting.",
                   "Use DataLoader workers.",
                   {}}};
  return r;
}

const report::SarifTool kTool{"Preflight", "0.1.0", "https://preflight.example/docs"};

std::string golden(const std::string& name) {
  return read_file(testing::source_dir() / "tests" / "golden" / name).value_or("missing golden " + name);
}

model::Finding with_message(std::string message, SourceLocation location) {
  model::Finding f = report::fixtures::sample_report().findings[0];
  f.message = std::move(message);
  f.location = std::move(location);
  return f;
}

TEST(ReportCiReports, JunitMatchesTheGolden) {
  EXPECT_EQ(report::to_junit(ci_sample()), golden("report.junit.xml")) << report::to_junit(ci_sample());
}

TEST(ReportCiReports, SarifMatchesTheGolden) {
  const auto sarif = report::to_sarif(ci_sample(), kTool, {});
  EXPECT_EQ(sarif, nlohmann::json::parse(golden("report.sarif.json"))) << sarif.dump(2);
}

TEST(ReportCiReports, AnnotationsMatchTheGolden) {
  std::ostringstream out;
  report::print_annotations(ci_sample(), "/home/ana", out);
  EXPECT_EQ(out.str(), golden("annotations.txt")) << out.str();
}

TEST(ReportCiReports, JunitEscapesMarkupAndReplacesWhatXmlCannotHold) {
  report::Report r = ci_sample();
  r.findings = {
      with_message("a <tag> & \"quotes\" 'apos'\nline two\ttab\x01\x1b[31m\xff\xc3(", {"a&b.py", 3, 0})};
  const std::string xml = report::to_junit(r);
  EXPECT_NE(xml.find("name=\"Permission Denied at a&amp;b.py:3\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("a &lt;tag&gt; &amp; &quot;quotes&quot; &apos;apos&apos;&#10;line two&#9;tab"),
            std::string::npos)
      << xml;
  // The body keeps its line breaks; control characters and malformed UTF-8 become U+FFFD.
  EXPECT_NE(xml.find("&apos;apos&apos;\nline two\ttab\xEF\xBF\xBD\xEF\xBF\xBD[31m\xEF\xBF\xBD\xEF\xBF\xBD("),
            std::string::npos)
      << xml;
  for (const char c : xml)
    EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') << xml;
}

TEST(ReportCiReports, JunitKeepsValidUtf8AndNamesRepeatedFindingsApart) {
  report::Report r = ci_sample();
  r.findings = {with_message("données: café ✓ 𝛼", {"train.py", 5, 0}),
                with_message("again", {"train.py", 5, 0})};
  const std::string xml = report::to_junit(r);
  EXPECT_NE(xml.find("données: café ✓ 𝛼"), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"Permission Denied at train.py:5\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"Permission Denied at train.py:5 #2\""), std::string::npos) << xml;
}

TEST(ReportCiReports, SarifUrisArePercentEncodedAndRelativeToTheCodeFolder) {
  report::Report r = ci_sample();
  r.code_dir = "/home/ana/my job/";
  r.findings = {with_message("m", {"data sets/load 100%.py", 2, 4})};
  const auto run = report::to_sarif(r, kTool, {})["runs"][0];
  EXPECT_EQ(run["originalUriBaseIds"]["CODE"]["uri"], "file:///home/ana/my%20job/");
  const auto physical = run["results"][0]["locations"][0]["physicalLocation"];
  EXPECT_EQ(physical["artifactLocation"]["uri"], "data%20sets/load%20100%25.py");
  EXPECT_EQ(physical["artifactLocation"]["uriBaseId"], "CODE");
  EXPECT_EQ(physical["region"]["startLine"], 2);
  EXPECT_EQ(physical["region"]["startColumn"], 4);
}

TEST(ReportCiReports, SarifNamesFilesOutsideTheCodeFolderByAbsoluteUri) {
  report::Report r = ci_sample();
  r.findings = {with_message("m", {"/usr/lib/python3/dist-packages/torch/serialization.py", 9, 0})};
  const auto artifact = report::to_sarif(
      r, kTool, {})["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
  EXPECT_EQ(artifact["uri"], "file:///usr/lib/python3/dist-packages/torch/serialization.py");
  EXPECT_FALSE(artifact.contains("uriBaseId"));
}

TEST(ReportCiReports, SarifUnderGithubActionsIsRelativeToTheRepository) {
  const auto run = report::to_sarif(ci_sample(), kTool, "/home/ana")["runs"][0];
  EXPECT_EQ(run["originalUriBaseIds"]["SRCROOT"]["uri"], "file:///home/ana/");
  const auto artifact = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
  EXPECT_EQ(artifact["uri"], "mnist/train.py");
  EXPECT_EQ(artifact["uriBaseId"], "SRCROOT");
  // A job outside the repository keeps its own folder as the base.
  EXPECT_TRUE(
      report::to_sarif(ci_sample(), kTool, "/srv/repo")["runs"][0]["originalUriBaseIds"].contains("CODE"));
}

TEST(ReportCiReports, JunitOfManyReportsHasASuiteForEachWithTheirTotals) {
  report::Report other = ci_sample();
  other.verdict = "pass";
  other.findings = {};
  other.duration_s = 1.5;
  const std::vector<report::Report> reports = {ci_sample(), other, ci_sample()};
  const std::string xml = report::to_junit(reports);
  const std::string one = report::to_junit(ci_sample());
  // Stage and finding cases: each failed report's, and the passed one's stages.
  const auto count = [&](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(xml, "<testsuite "), 3u);
  EXPECT_EQ(count(xml, "<testcase "), 2 * count(one, "<testcase ") + other.stages.size());
  EXPECT_NE(xml.find("<testsuite name=\"mnist@philly\" "), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testsuite name=\"mnist@philly #2\" "), std::string::npos);
  EXPECT_NE(xml.find("<testsuite name=\"mnist@philly #3\" "), std::string::npos);
  EXPECT_NE(xml.find(fmt::format("time=\"{:.3f}\">", 2 * ci_sample().duration_s + 1.5)), std::string::npos);
}

TEST(ReportCiReports, SarifOfManyReportsIsOneRunWithABasePerCodeFolder) {
  report::Report other = ci_sample();
  other.job_name = "cifar";
  other.code_dir = "/home/ana/cifar";
  other.job_path = "/home/ana/cifar/job.yaml";
  const std::vector<report::Report> reports = {ci_sample(), other};
  const std::size_t first_of_other = ci_sample().findings.size();
  const auto sarif = report::to_sarif(reports, kTool, {});
  ASSERT_EQ(sarif["runs"].size(), 1u);
  const auto run = sarif["runs"][0];
  EXPECT_EQ(run["automationDetails"]["id"], "preflight/batch/");
  EXPECT_EQ(run["originalUriBaseIds"]["CODE"]["uri"], "file:///home/ana/mnist/");
  EXPECT_EQ(run["originalUriBaseIds"]["CODE2"]["uri"], "file:///home/ana/cifar/");
  EXPECT_EQ(run["results"].size(), 2 * ci_sample().findings.size());
  EXPECT_EQ(run["tool"]["driver"]["rules"].size(), ci_sample().categories.size());
  EXPECT_EQ(run["results"][first_of_other]["properties"]["job"], "cifar@philly");
  // Both jobs in the repository: one base for all.
  const auto in_repo = report::to_sarif(reports, kTool, "/home/ana")["runs"][0];
  EXPECT_EQ(in_repo["originalUriBaseIds"].size(), 1u);
  EXPECT_EQ(in_repo["results"][first_of_other]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "cifar/train.py");
}

TEST(ReportCiReports, AnnotationsEscapeDataAndProperties) {
  report::Report r = ci_sample();
  model::Finding f = with_message("100% sure\r\nsecond line", {"dir,with:colon/train.py", 4, 0});
  f.category = "Type: Mismatch, really";
  f.hint = "";
  r.findings = {f};
  std::ostringstream out;
  report::print_annotations(r, "/elsewhere", out);
  EXPECT_EQ(out.str(),
            "::error file=/home/ana/mnist/dir%2Cwith%3Acolon/train.py,line=4,title=Type%3A Mismatch%2C "
            "really::100%25 sure%0D%0Asecond line\n");
}

}  // namespace
}  // namespace preflight
