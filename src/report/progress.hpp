// What a command is doing while it does it (docs/cli.md "Progress"). On a terminal, outside
// CI, one status line on stderr: the step under way and the time so far, redrawn in place and
// cleared at the end. Elsewhere the notes alone, as "preflight: ..." log lines. The base class
// shows nothing, for tests and callers that want silence.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>

namespace preflight::report {

class Progress {
 public:
  virtual ~Progress() = default;
  virtual void note(const std::string& line) { (void)line; }  // worth a log line: "image pytorch"
  virtual void step(const std::string& what) { (void)what; }  // a passing state: "stage train"
  // Whether steps are shown: following the job's stages costs work only worth doing then.
  virtual bool shows_steps() const { return false; }
  // Writes a line to keep (the job's output) without mixing it into the status line.
  virtual void write_line(std::ostream& out, std::string_view line);
  virtual void clear() {}  // removes the status line, before the report is printed
};

// Notes as "preflight: LINE" on `out` (dimmed when `color`); steps are not logged.
class ProgressLog : public Progress {
 public:
  ProgressLog(std::ostream& out, bool color) : out_(out), color_(color) {}
  void note(const std::string& line) override;

 private:
  std::ostream& out_;
  bool color_;
};

// The status line on a terminal `columns` wide; a ticker redraws it each quarter second so
// that the time keeps counting through a silent step.
class StatusLine : public Progress {
 public:
  StatusLine(std::ostream& out, std::size_t columns);
  ~StatusLine() override;
  void note(const std::string& line) override { step(line); }
  void step(const std::string& what) override;
  bool shows_steps() const override { return true; }
  void write_line(std::ostream& out, std::string_view line) override;
  void clear() override;

 private:
  void draw();  // with mutex_ held

  std::ostream& out_;
  std::size_t columns_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::mutex mutex_;
  std::string step_;
  bool shown_ = false;
  std::condition_variable_any tick_;
  std::jthread ticker_;
};

using EnvLookup = std::function<const char*(const char*)>;

// Whether to show a status line: stderr is a terminal that can redraw (TERM is not dumb), and
// no CI is announced (CI or GITHUB_ACTIONS set to anything but "" , "0" or "false").
bool status_line_wanted(bool stderr_is_terminal, const EnvLookup& env = std::getenv);

// The status line's text: "preflight: STEP… 1m05s", the step cut to fit `columns` (a wrapped
// line could not be redrawn in place).
std::string status_text(const std::string& step, std::chrono::milliseconds elapsed, std::size_t columns);

// A StatusLine when status_line_wanted() for stderr and not `quiet`, else a ProgressLog.
std::unique_ptr<Progress> progress_on_stderr(bool quiet);

}  // namespace preflight::report
