#include "report/progress.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <iostream>

#include "report/report.hpp"

namespace preflight::report {
namespace {

constexpr auto kTick = std::chrono::milliseconds(250);
constexpr const char* kEraseLine = "\r\033[K";

bool announced(const char* value) {
  if (value == nullptr) return false;
  const std::string_view text(value);
  return !text.empty() && text != "0" && text != "false";
}

// `text` cut to `columns` characters; a UTF-8 character is never cut in two.
std::string fit(const std::string& text, std::size_t columns) {
  std::size_t shown = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (++shown > columns) return text.substr(0, i);
  }
  return text;
}

std::size_t terminal_columns(int fd) {
  winsize size{};
  return ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : 80;
}

}  // namespace

void Progress::write_line(std::ostream& out, std::string_view line) { out << line << "\n" << std::flush; }

void ProgressLog::note(const std::string& line) {
  out_ << (color_ ? "\033[2mpreflight: " : "preflight: ") << line << (color_ ? "\033[0m\n" : "\n");
}

StatusLine::StatusLine(std::ostream& out, std::size_t columns)
    : out_(out), columns_(columns), ticker_([this](const std::stop_token& stop) {
        std::unique_lock lock(mutex_);
        while (!stop.stop_requested()) {
          tick_.wait_for(lock, stop, kTick, [] { return false; });
          if (shown_ && !stop.stop_requested()) draw();
        }
      }) {}

StatusLine::~StatusLine() {
  ticker_.request_stop();
  ticker_.join();
  StatusLine::clear();  // this class's own: a destructor does not dispatch
}

void StatusLine::step(const std::string& what) {
  std::lock_guard lock(mutex_);
  step_ = what;
  shown_ = true;
  draw();
}

void StatusLine::write_line(std::ostream& out, std::string_view line) {
  std::lock_guard lock(mutex_);
  if (shown_) out_ << kEraseLine;
  out << line << "\n";
  if (shown_) draw();
  out << std::flush;
}

void StatusLine::clear() {
  std::lock_guard lock(mutex_);
  if (shown_) out_ << kEraseLine << std::flush;
  shown_ = false;
}

void StatusLine::draw() {
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_);
  out_ << kEraseLine << status_text(step_, elapsed, columns_) << std::flush;
}

bool status_line_wanted(bool stderr_is_terminal, const EnvLookup& env) {
  const char* term = env("TERM");
  return stderr_is_terminal && !(term && std::string_view(term) == "dumb") && !announced(env("CI")) &&
         !announced(env("GITHUB_ACTIONS"));
}

std::string status_text(const std::string& step, std::chrono::milliseconds elapsed, std::size_t columns) {
  const auto seconds = elapsed.count() / 1000;
  const std::string time =
      seconds < 60 ? fmt::format("{}s", seconds) : fmt::format("{}m{:02}s", seconds / 60, seconds % 60);
  const std::string prefix = "preflight: ", suffix = "… " + time;
  // The last column stays empty: writing into it wraps on some terminals.
  const std::size_t fixed = prefix.size() + 2 + time.size() + 1;
  return prefix + fit(step, columns > fixed ? columns - fixed : 0) + suffix;
}

std::unique_ptr<Progress> progress_on_stderr(bool quiet) {
  if (!quiet && status_line_wanted(isatty(STDERR_FILENO) == 1))
    return std::make_unique<StatusLine>(std::cerr, terminal_columns(STDERR_FILENO));
  return std::make_unique<ProgressLog>(std::cerr, use_color(STDERR_FILENO));
}

}  // namespace preflight::report
