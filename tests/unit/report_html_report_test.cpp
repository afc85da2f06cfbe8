// The HTML report page: its hooks for a browser test, the code around a finding, the trace
// timeline and its bounds, escaping of hostile text, nothing fetched; and the reader of the
// code's lines, which never shows a file outside the code folder.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <regex>

#include "report/html_report.hpp"
#include "report/trace_timeline.hpp"
#include "report_fixtures.hpp"
#include "test_support.hpp"
#include "util/text.hpp"

namespace preflight {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using report::fixtures::sample_report;

const std::string kHostile = "</script><img src=x onerror=alert(1)>";

// Lines as a file would give them: "line N", and `<!-- N` on line 17.
std::vector<std::string> fake_lines(const fs::path&, int first, int last) {
  std::vector<std::string> out;
  for (int n = std::max(first, 1); n <= std::min(last, 30); ++n)
    out.push_back(n == 17 ? "<!-- " + std::to_string(n) : "line " + std::to_string(n));
  return out;
}

report::Report passing_report() {
  report::Report r = sample_report();
  r.verdict = "pass";
  r.findings.clear();
  for (auto& stage : r.stages)
    if (stage.status != "absent") stage.status = "passed";
  r.estimate->failure_stage.reset();
  r.estimate->failure_after_steps.reset();
  r.estimate->failure_after_hours.reset();
  r.estimate->gpu_hours_saved.reset();
  return r;
}

json span(const std::string& name, const std::string& cat, double ts, double dur, int tid = 1,
          json args = json::object()) {
  return {{"ph", "X"},  {"name", name}, {"cat", cat}, {"ts", ts},
          {"dur", dur}, {"pid", 1},     {"tid", tid}, {"args", args}};
}

// A run of two seconds: stages, steps nested in train, the failure at checkpoint, a counter.
json sample_trace() {
  json events = json::array();
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"args", {{"name", "train.py"}}}});
  events.push_back(
      {{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", "main"}}}});
  events.push_back(span("init", "stage", 0, 200000));
  events.push_back(span("train", "stage", 200000, 1500000));
  for (int i = 0; i < 10; ++i)
    events.push_back(span("step", "step", 210000 + i * 140000, 120000, 1, {{"step", i}}));
  events.push_back(span("forward", "forward", 215000, 50000));
  events.push_back(span("checkpoint", "stage", 1700000, 300000));
  events.push_back(span("PermissionError", "failure", 1950000, 0, 1, {{"path", "/philly/code/model.pt"}}));
  events.push_back(span("next batch", "data", 300000, 20000, 2));
  for (int i = 0; i < 20; ++i)
    events.push_back(
        {{"ph", "C"}, {"name", "memory"}, {"pid", 1}, {"ts", i * 100000}, {"args", {{"rss", i * i}}}});
  return {{"traceEvents", events}, {"otherData", {{"preflight", {{"dropped", 0}}}}}};
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

TEST(ReportHtmlReport, PassingReportCarriesTheVerdictAndEveryStage) {
  const std::string page = report::to_html(passing_report(), nullptr, fake_lines);
  EXPECT_NE(page.find("<body data-verdict=\"pass\">"), std::string::npos);
  EXPECT_NE(page.find("<span id=\"verdict\">pass</span>"), std::string::npos);
  for (const auto& stage : passing_report().stages)
    EXPECT_NE(page.find("<div class=\"stage\" data-stage=\"" + stage.name + "\" data-status=\"" +
                        stage.status + "\""),
              std::string::npos)
        << stage.name;
  EXPECT_EQ(page.find("<section class=\"finding\""), std::string::npos);
  EXPECT_NE(page.find("No trace was recorded"), std::string::npos);
  EXPECT_NE(page.find("Preflight " PREFLIGHT_VERSION), std::string::npos);
}

TEST(ReportHtmlReport, FailingReportShowsTheFindingTheEstimateClampsAndNotes) {
  const std::string page = report::to_html(sample_report(), sample_trace(), fake_lines);
  EXPECT_NE(page.find("<body data-verdict=\"fail\">"), std::string::npos);
  EXPECT_NE(page.find("<div class=\"stage\" data-stage=\"checkpoint\" data-status=\"failed\""),
            std::string::npos);
  EXPECT_NE(page.find("<div class=\"stage\" data-stage=\"evaluate\" data-status=\"not_reached\""),
            std::string::npos);
  EXPECT_NE(
      page.find("<section class=\"finding\" data-severity=\"error\" data-category=\"Permission Denied\" "
                "data-stage=\"checkpoint\" data-location=\"train.py:18\""),
      std::string::npos);
  EXPECT_NE(page.find("prediction confirmed"), std::string::npos);
  EXPECT_NE(page.find("the path &quot;model.pt&quot; is in the code folder"), std::string::npos);
  EXPECT_NE(page.find("write checkpoints to ${{outputs.model}}"), std::string::npos);
  EXPECT_NE(page.find("@sha256:0123456789ab<"), std::string::npos);
  const std::string estimate = page.substr(page.find("<section id=\"estimate\">"));
  EXPECT_NE(estimate.find("13,132"), std::string::npos);
  EXPECT_NE(estimate.find("1.2 GiB needed of 16.0 GiB"), std::string::npos);
  EXPECT_NE(estimate.find("4 × Tesla P100-PCIE-16GB"), std::string::npos);
  EXPECT_NE(estimate.find("strikes at checkpoint after 938 steps"), std::string::npos);
  const std::string clamps = page.substr(page.find("<section id=\"clamps\">"));
  EXPECT_NE(clamps.find("argparse --epochs"), std::string::npos);
  EXPECT_NE(clamps.find("14 → 2"), std::string::npos);
  EXPECT_NE(clamps.find("train.py:40"), std::string::npos);
  EXPECT_NE(page.substr(page.find("<section id=\"notes\">")).find("sampled: 32 files kept"),
            std::string::npos);
}

TEST(ReportHtmlReport, StaticChecksAloneHaveNoStagesNorEstimate) {
  report::Report r = sample_report();
  r.dry_run = false;
  r.stages.clear();
  r.estimate.reset();
  r.clamps.clear();
  r.notes.clear();
  const std::string page = report::to_html(r, nullptr, fake_lines);
  EXPECT_EQ(page.find("<div class=\"stage\""), std::string::npos);
  EXPECT_NE(page.find("No stage ran"), std::string::npos);
  EXPECT_NE(page.find("<section id=\"estimate\">\n<h2>Estimate</h2>\n<p class=\"empty\">"),
            std::string::npos);
  EXPECT_NE(page.find("<section id=\"clamps\">"), std::string::npos);
  EXPECT_NE(page.find("<section id=\"notes\">"), std::string::npos);
}

TEST(ReportHtmlReport, GpuMemoryThatDoesNotFitIsSaid) {
  report::Report r = sample_report();
  r.estimate->gpu_needed_bytes = 2 * r.estimate->gpu_available_bytes;
  const std::string page = report::to_html(r, nullptr, fake_lines);
  EXPECT_NE(page.find("32.0 GiB needed of 16.0 GiB (200%) <span class=\"over-text\">does not fit</span>"),
            std::string::npos);
}

TEST(ReportHtmlReport, CodeAroundAFindingHasItsLineNumbersAndTheLineMarked) {
  const std::string page = report::to_html(sample_report(), nullptr, fake_lines);
  const auto code = page.find("<pre class=\"code\">");
  ASSERT_NE(code, std::string::npos);
  const std::string excerpt = page.substr(code, page.find("</pre>", code) - code);
  EXPECT_NE(excerpt.find("<span class=\"hit\"><span class=\"ln\">18</span>line 18</span>"),
            std::string::npos);
  EXPECT_NE(excerpt.find("<span class=\"ln\">15</span>line 15"), std::string::npos);
  EXPECT_NE(excerpt.find("<span class=\"ln\">21</span>line 21"), std::string::npos);
  EXPECT_EQ(excerpt.find("line 14"), std::string::npos);
  EXPECT_EQ(excerpt.find("line 22"), std::string::npos);
  EXPECT_NE(excerpt.find("&lt;!-- 17"), std::string::npos);
  EXPECT_EQ(page.find("<!--"), std::string::npos);
  // The static evidence's own line, under the finding.
  EXPECT_NE(page.find("<pre class=\"evidence-code\"><code><span class=\"ln\">12</span>line 12"),
            std::string::npos);
}

TEST(ReportHtmlReport, NoCodeWhenTheLinesCannotBeRead) {
  const report::SourceLines none = [](const fs::path&, int, int) { return std::vector<std::string>{}; };
  EXPECT_EQ(report::to_html(sample_report(), nullptr, none).find("<pre class=\"code\">"), std::string::npos);
  EXPECT_EQ(report::to_html(sample_report(), nullptr, nullptr).find("<pre class=\"code\">"),
            std::string::npos);
}

TEST(ReportHtmlReport, HostileTextFromTheJobTheReportAndTheTraceIsEscaped) {
  report::Report r = sample_report();
  r.job_name = kHostile;
  r.verdict = "fail\" onload=\"alert(1)";
  r.stages[1].name = kHostile;
  auto& f = r.findings.front();
  f.message = kHostile + "\x01\xFF";
  f.category = "\" onmouseover=\"alert(1)";
  f.stage = kHostile;
  f.hint = "'><svg onload=alert(1)>";
  f.location.file = "<u>.py";
  f.predicted.front().message = kHostile;
  r.clamps.front().what = kHostile;
  r.clamps.front().value = kHostile;
  r.notes = {kHostile};
  r.image_digest = kHostile;
  json trace = sample_trace();
  trace["traceEvents"].push_back(span(kHostile, kHostile, 0, 1000, 1, {{kHostile, kHostile}}));
  trace["traceEvents"].push_back(span(kHostile, "failure", 10, 1000, 3, {{"why", kHostile}}));
  trace["traceEvents"].push_back(
      {{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"args", {{"name", kHostile}}}});
  trace["traceEvents"].push_back(
      {{"ph", "C"}, {"name", kHostile}, {"pid", 1}, {"ts", 5}, {"args", {{kHostile, 1}}}});
  const report::SourceLines lines = [](const fs::path&, int first, int last) {
    return std::vector<std::string>(static_cast<std::size_t>(last - first + 1), "x = 1  # <!-- " + kHostile);
  };
  const std::string page = report::to_html(r, trace, lines);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("<svg onload"), std::string::npos);
  EXPECT_EQ(page.find("<!--"), std::string::npos);
  EXPECT_EQ(page.find("<u>"), std::string::npos);
  EXPECT_EQ(count(page, "</script>"), 1u);  // the page's own script
  EXPECT_EQ(page.find("onmouseover=\""), std::string::npos);
  EXPECT_EQ(page.find("onload=\""), std::string::npos);
  EXPECT_NE(page.find("data-category=\"&quot; onmouseover=&quot;alert(1)\""), std::string::npos);
  EXPECT_NE(page.find("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;\xEF\xBF\xBD\xEF\xBF\xBD"),
            std::string::npos);
  EXPECT_NE(page.find("<body data-verdict=\"fail&quot; onload=&quot;alert(1)\">"), std::string::npos);
}

TEST(ReportHtmlReport, PageFetchesNothing) {
  const std::string page = report::to_html(sample_report(), sample_trace(), fake_lines);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("url("), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  const std::regex href("href=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), href); it != std::sregex_iterator(); ++it)
    EXPECT_EQ((*it)[1].str().front(), '#') << (*it)[0];
  EXPECT_NE(page.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
                      "'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"),
            std::string::npos);
}

TEST(ReportHtmlReport, TraceTimelineDrawsLanesNestedSpansCountersAndTheFailure) {
  const std::string page = report::to_html(sample_report(), sample_trace(), fake_lines);
  ASSERT_NE(page.find("<svg id=\"timeline\""), std::string::npos);
  EXPECT_EQ(count(page, "data-cat=\"stage\""), 3u);
  EXPECT_EQ(count(page, "data-cat=\"step\""), 10u);
  EXPECT_EQ(count(page, "data-cat=\"failure\""), 1u);
  EXPECT_NE(page.find("class=\"s-failure\" data-cat=\"failure\""), std::string::npos);
  EXPECT_NE(page.find(">train.py · main<"), std::string::npos);
  EXPECT_NE(page.find(">train.py · tid 2<"), std::string::npos);
  // Steps nest in train: a row below it; the forward pass in a step, one more.
  EXPECT_NE(page.find("y=\"32\" width=\"930.000\" height=\"13\"><title>train — 1500.000 ms (stage)"),
            std::string::npos);
  EXPECT_NE(page.find("y=\"48\" width=\"74.400\" height=\"13\"><title>step — 120.000 ms (step)\nstep=0"),
            std::string::npos);
  EXPECT_NE(page.find("y=\"64\" width=\"31.000\" height=\"13\"><title>forward"), std::string::npos);
  EXPECT_NE(page.find("<polyline class=\"counter\""), std::string::npos);
  EXPECT_NE(page.find("<strong>The failure:</strong> PermissionError at 1.9 s in train.py · main — "
                      "path=/philly/code/model.pt"),
            std::string::npos);
  EXPECT_NE(page.find(">1 s</text>"), std::string::npos);
  EXPECT_EQ(page.find("dropped"), std::string::npos);
}

TEST(ReportHtmlReport, ATraceOfManyTinySpansGivesABoundedPage) {
  // Written as text and parsed: a hundred thousand json initializer lists take seconds.
  std::string text =
      R"({"traceEvents": [{"ph": "X", "name": "train", "cat": "stage", "ts": 0, "dur": 1e6, "pid": 1, "tid": 1})";
  for (int i = 0; i < 100000; ++i)
    text += R"(, {"ph": "X", "name": "layer", "cat": "layer", "ts": )" + std::to_string(i * 10) +
            R"(, "dur": 1, "pid": 1, "tid": 1, "args": {"i": )" + std::to_string(i) + "}}";
  const std::string page = report::to_html(sample_report(), json::parse(text + "]}"), fake_lines);
  EXPECT_LT(page.size(), 3u << 20);
  EXPECT_LT(count(page, "<rect"), 100u);
  EXPECT_NE(page.find("100,000 spans narrower than 0.2 px at the full width are merged into 1 grey block ("),
            std::string::npos);
  EXPECT_NE(page.find("data-cat=\"merged\""), std::string::npos);
  EXPECT_NE(page.find("<title>100,000 small spans</title>"), std::string::npos);
}

TEST(ReportHtmlReport, SpansWideEnoughToSeeAreMergedAnywayPastTheBoundOfRectangles) {
  // 30,000 spans of 0.6 px, 1.24 px apart, in 30 lanes: above the bound until merged at 0.8 px.
  json events = json::array();
  for (int lane = 0; lane < 30; ++lane)
    for (int i = 0; i < 1000; ++i) events.push_back(span("op", "forward", i * 1000.0, 500, lane));
  const std::string page = report::to_html(sample_report(), {{"traceEvents", events}}, fake_lines);
  EXPECT_LE(count(page, "data-cat="), report::kMaxTimelineRects);
  EXPECT_NE(page.find("30,000 spans narrower than 0.8 px at the full width are merged"), std::string::npos);
}

TEST(ReportHtmlReport, DroppedTraceEventsAreSaid) {
  json trace = sample_trace();
  trace["otherData"]["preflight"]["dropped"] = 1234;
  EXPECT_NE(report::to_html(sample_report(), trace, fake_lines)
                .find("1,234 trace events were dropped (bound of 5 MB)"),
            std::string::npos);
  const json empty = {{"traceEvents", json::array()}, {"otherData", {{"preflight", {{"dropped", 7}}}}}};
  EXPECT_NE(report::to_html(sample_report(), empty, fake_lines).find("7 trace events were dropped"),
            std::string::npos);
}

TEST(ReportHtmlReport, MalformedTraceEventsAreSkipped) {
  const json trace = {{"traceEvents",
                       {1,
                        "x",
                        nullptr,
                        json::object(),
                        {{"ph", "X"}, {"ts", "0"}, {"dur", 5}},
                        {{"ph", "X"}, {"ts", 0}, {"dur", -5}},
                        {{"ph", "X"}, {"ts", 0}},
                        {{"ph", "C"}, {"ts", 1}, {"args", "no"}},
                        {{"ph", "M"}, {"name", "process_name"}}}},
                      {"otherData", "none"}};
  const std::string page = report::to_html(sample_report(), trace, fake_lines);
  EXPECT_NE(page.find("The trace holds no spans or counters to draw"), std::string::npos);
  EXPECT_NE(report::to_html(sample_report(), "not a trace", fake_lines).find("holds no spans"),
            std::string::npos);
}

TEST(ReportHtmlReport, PageMatchesTheGolden) {
  const fs::path golden = testing::source_dir() / "tests" / "golden" / "report.html";
  const std::string page = report::to_html(sample_report(), sample_trace(), fake_lines);
  // PREFLIGHT_UPDATE_GOLDEN=1 rewrites the golden after a change meant to alter the page.
  if (const char* update = std::getenv("PREFLIGHT_UPDATE_GOLDEN"); update && std::string(update) == "1")
    std::ofstream(golden, std::ios::binary) << page;
  const std::string expected = read_file(golden).value_or("missing golden report.html");
  std::size_t differ = 0;
  while (differ < page.size() && differ < expected.size() && page[differ] == expected[differ]) ++differ;
  // The place where they part, rather than two pages of 20 KB.
  EXPECT_TRUE(page == expected) << "the page differs from tests/golden/report.html at byte " << differ
                                << ":\n"
                                << page.substr(differ > 200 ? differ - 200 : 0, 400);
}

// The code folder: train.py, a long line, links pointing out of it; a secret beside it.
struct CodeTree {
  testing::TempDir dir;
  fs::path code = dir.path() / "code";
  fs::path secret = dir.write("secret.txt", "host secret\n");
  fs::path job = dir.write("jobs/job.yaml", "name: mnist\ncommand: python train.py\n");
  CodeTree() {
    dir.write("code/train.py", "import torch\r\nmodel = Net()\ntorch.save(model, 'model.pt')\n");
    dir.write("code/long.py", std::string(1000, 'x') + "\n");
    fs::create_symlink(secret, code / "absolute_link.py");
    fs::create_symlink("../secret.txt", code / "relative_link.py");
    fs::create_directories(code / "folder.py");
  }
};

TEST(ReportHtmlReport, SourceLinesReadAFileOfTheCodeFolder) {
  CodeTree tree;
  const auto lines = report::source_lines_below(tree.code, tree.job);
  EXPECT_EQ(lines("train.py", 1, 2), (std::vector<std::string>{"import torch", "model = Net()"}));
  EXPECT_EQ(lines("train.py", -5, 100).size(), 3u);
  EXPECT_EQ(lines("train.py", 3, 3), (std::vector<std::string>{"torch.save(model, 'model.pt')"}));
  EXPECT_TRUE(lines("train.py", 9, 12).empty());
  EXPECT_EQ(lines("long.py", 1, 1).front(), std::string(400, 'x') + "…");
  EXPECT_EQ(lines(tree.job, 2, 2), (std::vector<std::string>{"command: python train.py"}));
}

TEST(ReportHtmlReport, SourceLinesNeverLeaveTheCodeFolder) {
  CodeTree tree;
  const auto lines = report::source_lines_below(tree.code, tree.job);
  EXPECT_TRUE(lines("absolute_link.py", 1, 5).empty());
  EXPECT_TRUE(lines("relative_link.py", 1, 5).empty());
  EXPECT_TRUE(lines("../secret.txt", 1, 5).empty());
  EXPECT_TRUE(lines("sub/../../secret.txt", 1, 5).empty());
  EXPECT_TRUE(lines(tree.secret, 1, 5).empty());
  EXPECT_TRUE(lines("folder.py", 1, 5).empty());
  EXPECT_TRUE(lines("missing.py", 1, 5).empty());
  ASSERT_EQ(::mkfifo((tree.code / "fifo.py").c_str(), 0600), 0);
  EXPECT_TRUE(lines("fifo.py", 1, 5).empty());
}

}  // namespace
}  // namespace preflight
