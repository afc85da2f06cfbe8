// The status line: shown on a terminal outside CI only, redrawn in place with the step and the
// time so far, out of the way of the lines a command keeps, and cleared at the end.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "report/progress.hpp"

namespace preflight {
namespace {

using std::chrono::milliseconds;

report::EnvLookup env(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> const char* {
    auto it = values.find(name);
    return it == values.end() ? nullptr : it->second.c_str();
  };
}

TEST(ReportProgress, AStatusLineOnATerminalOnly) {
  EXPECT_TRUE(report::status_line_wanted(true, env({{"TERM", "xterm"}})));
  EXPECT_FALSE(report::status_line_wanted(false, env({{"TERM", "xterm"}})));
  EXPECT_FALSE(report::status_line_wanted(true, env({{"TERM", "dumb"}})));
}

TEST(ReportProgress, QuietInCi) {
  EXPECT_FALSE(report::status_line_wanted(true, env({{"CI", "true"}})));
  EXPECT_FALSE(report::status_line_wanted(true, env({{"GITHUB_ACTIONS", "true"}})));
  EXPECT_FALSE(report::status_line_wanted(true, env({{"CI", "1"}})));
  EXPECT_TRUE(report::status_line_wanted(true, env({{"CI", "false"}, {"GITHUB_ACTIONS", ""}})));
}

TEST(ReportProgress, TheStepAndTheTimeSoFar) {
  EXPECT_EQ(report::status_text("stage train", milliseconds(12'400), 80), "preflight: stage train… 12s");
  EXPECT_EQ(report::status_text("building image pytorch", milliseconds(65'000), 80),
            "preflight: building image pytorch… 1m05s");
}

TEST(ReportProgress, ALongStepIsCutToTheTerminalKeepingTheTime) {
  const std::string line = report::status_text(
      "mmdebstrap: Get:1 http://deb.debian.org/debian bookworm InRelease", milliseconds(3'000), 40);
  EXPECT_EQ(line, "preflight: mmdebstrap: Get:1 http:/… 3s");
  EXPECT_EQ(report::status_text("é" + std::string(30, 'x'), milliseconds(0), 20), "preflight: éxxx… 0s");
}

TEST(ReportProgress, TheStatusLineIsRedrawnInPlaceAndCleared) {
  std::ostringstream terminal, kept;
  {
    report::StatusLine status(terminal, 80);
    status.step("image pytorch");
    status.step("stage train");
    status.write_line(kept, "  | epoch 1");
    status.clear();
  }
  const std::string shown = terminal.str();
  EXPECT_EQ(shown.rfind("\r\033[Kpreflight: image pytorch… 0s\r\033[Kpreflight: stage train… 0s", 0), 0u)
      << shown;
  EXPECT_EQ(shown.find('\n'), std::string::npos) << "only the kept line ends a line";
  EXPECT_EQ(shown.substr(shown.size() - 4), "\r\033[K") << "cleared at the end";
  EXPECT_EQ(kept.str(), "  | epoch 1\n");
}

TEST(ReportProgress, AKeptLineClearsTheStatusFirstAndRedrawsItAfter) {
  std::ostringstream terminal;
  report::StatusLine status(terminal, 80);
  status.step("stage data");
  const auto before = terminal.str().size();
  status.write_line(terminal, "  | loading");
  status.clear();
  EXPECT_EQ(terminal.str().find("\r\033[K  | loading\n\r\033[Kpreflight: stage data… 0s", before), before)
      << terminal.str();
}

TEST(ReportProgress, OutsideATerminalNotesAreLogLinesAndStepsNothing) {
  std::ostringstream log;
  report::ProgressLog progress(log, false);
  progress.note("image pytorch");
  progress.step("stage train");
  progress.clear();
  EXPECT_EQ(log.str(), "preflight: image pytorch\n");
}

TEST(ReportProgress, TheBaseShowsNothingButKeptLines) {
  std::ostringstream kept;
  report::Progress silent;
  silent.note("image pytorch");
  silent.step("stage train");
  silent.write_line(kept, "  | hello");
  EXPECT_EQ(kept.str(), "  | hello\n");
}

}  // namespace
}  // namespace preflight
