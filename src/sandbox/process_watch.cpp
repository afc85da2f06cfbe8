#include "sandbox/process_watch.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>

#include "sandbox/interrupt.hpp"
#include "util/text.hpp"

namespace preflight::sandbox {
namespace fs = std::filesystem;

namespace {

// From the SIGUSR2 of a timed-out run to its kill: time for the harness to write its stacks.
constexpr std::chrono::milliseconds kStackDumpGrace{500};

// Reads "key N" from a cgroup's flat-keyed file; 0 when absent.
std::uint64_t cgroup_value(const std::string& text, const std::string& key) {
  auto at = text.find(key + " ");
  if (at == std::string::npos || (at > 0 && text[at - 1] != '\n')) return 0;
  return std::strtoull(text.c_str() + at + key.size() + 1, nullptr, 10);
}

}  // namespace

void OutputPipe::close_sink() {
  ::close(pipe.native_sink());
  pipe.assign_sink(-1);
}

void OutputPipe::take(std::string_view part) {
  if (cut) return;
  const std::size_t room = max_line - line.size();
  cut = part.size() > room;
  line.append(part.substr(0, room));
}

bool OutputPipe::drain(const LineSink& on_line) {
  char buffer[65536];
  ssize_t n = ::read(pipe.native_source(), buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) {
    if (!line.empty()) on_line(stream, line);
    line.clear();
    return open = false;
  }
  std::string_view data(buffer, static_cast<std::size_t>(n));
  for (std::size_t nl; (nl = data.find('\n')) != std::string_view::npos; data.remove_prefix(nl + 1)) {
    take(data.substr(0, nl));
    on_line(stream, line);
    line.clear();
    cut = false;
  }
  take(data);
  return true;
}

Status prepare_run_dir(const plan::RunPlan& plan) {
  std::error_code ec;
  for (const auto& dir : plan.prepare) {
    fs::create_directories(dir.path, ec);
    if (ec || ::chown(dir.path.c_str(), dir.uid, dir.gid) != 0)
      return Error::runtime(
          fmt::format("cannot prepare {}: {}", dir.path.string(), ec ? ec.message() : std::strerror(errno)));
  }
  for (const auto& file : plan.files) {
    fs::create_directories(file.path.parent_path(), ec);
    std::ofstream out(file.path, std::ios::trunc);
    out << file.content;
    if (ec || !out.flush())
      return Error::runtime(
          fmt::format("cannot write {}: {}", file.path.string(), ec ? ec.message() : std::strerror(errno)));
  }
  return Ok{};
}

void read_memory_cgroup(const std::string& cgroup_path, ContainerExit& exit) {
  fs::path v1 = fs::path("/sys/fs/cgroup/memory") / fs::path(cgroup_path).relative_path();
  fs::path v2 = fs::path("/sys/fs/cgroup") / fs::path(cgroup_path).relative_path();
  if (fs::exists(v1 / "memory.oom_control")) {
    exit.oom_killed = cgroup_value(read_file(v1 / "memory.oom_control").value_or(""), "oom_kill") > 0;
    exit.peak_memory_bytes =
        std::strtoull(read_file(v1 / "memory.max_usage_in_bytes").value_or("").c_str(), nullptr, 10);
  } else if (fs::exists(v2 / "memory.events")) {
    exit.oom_killed = cgroup_value(read_file(v2 / "memory.events").value_or(""), "oom_kill") > 0;
    exit.peak_memory_bytes = std::strtoull(read_file(v2 / "memory.peak").value_or("").c_str(), nullptr, 10);
  }
}

ProcessWatch::ProcessWatch(const plan::RunPlan& plan, pid_t pid, Clock::time_point started,
                           Signaller signal_all)
    : plan_(plan),
      pid_(pid),
      started_(started),
      deadline_(started + plan.timeout),
      signal_all_(std::move(signal_all)),
      disk_(plan, started) {}

ContainerExit ProcessWatch::follow(int pidfd, OutputPipe& out, OutputPipe& err, const LineSink& on_line) {
  while (!exited_ || out.open || err.open) {
    const auto ready = wait(pidfd, out, err, on_line);
    if (!ready) break;
    reap();
    const bool timed_out = !exited_ && Clock::now() >= deadline_;
    const int interrupted = interrupt_signal();
    if (!killed_ && !exited_ && !timed_out && !interrupted) watch_disk();
    if (timed_out && !dumping_ && !interrupted && plan_.harness) {
      ask_for_stacks();
      continue;
    }
    if (!killed_ && !exited_ && (timed_out || interrupted)) stop(timed_out, interrupted);
    if (killed_ && exited_ && (out.open || err.open) && *ready == 0) break;
  }
  finish();
  return exit_;
}

// Waits for output, the process's end, Ctrl-C, the deadline or the disk's next measure, and
// hands on what was printed. poll's count (-1 when a signal cut it short); nullopt when poll
// itself failed.
std::optional<int> ProcessWatch::wait(int pidfd, OutputPipe& out, OutputPipe& err, const LineSink& on_line) {
  std::vector<pollfd> fds;
  if (out.open) fds.push_back({out.pipe.native_source(), POLLIN, 0});
  if (err.open) fds.push_back({err.pipe.native_source(), POLLIN, 0});
  if (!exited_) fds.push_back({pidfd, POLLIN, 0});
  if (!killed_) fds.push_back({interrupt_fd(), POLLIN, 0});  // it stays readable once signalled
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::min(deadline_, disk_.due()) - Clock::now())
          .count();
  const int ready =
      ::poll(fds.data(), fds.size(), killed_ ? 1000 : static_cast<int>(std::max<long>(left, 0)));
  if (ready < 0) return errno == EINTR ? std::optional<int>(-1) : std::nullopt;
  for (const auto& fd : fds) {
    if (!(fd.revents & (POLLIN | POLLHUP | POLLERR))) continue;
    if (fd.fd == out.pipe.native_source())
      out.drain(on_line);
    else if (fd.fd == err.pipe.native_source())
      err.drain(on_line);
  }
  return ready;
}

void ProcessWatch::reap() {
  int status = 0;
  if (exited_ || ::waitpid(pid_, &status, WNOHANG) != pid_) return;
  exited_ = true;
  if (WIFEXITED(status)) exit_.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    exit_.signal = WTERMSIG(status);
    exit_.exit_code = 128 + exit_.signal;
  }
}

void ProcessWatch::watch_disk() {
  const auto over = disk_.check(Clock::now());
  if (over == DiskWatch::Over::Nothing) return;
  exit_.disk_full = over == DiskWatch::Over::Quota;
  exit_.host_disk_low = over == DiskWatch::Over::HostDisk;
  exit_.written_bytes = disk_.written_bytes();
  exit_.host_free_bytes = disk_.free_bytes();
  kill();
}

// The harness writes where each process is on SIGUSR2 (docs/harness.md "Where a job hangs");
// it gets a moment to do so before the kill.
void ProcessWatch::ask_for_stacks() {
  dumping_ = true;
  exit_.timed_out = true;
  signal_all_(SIGUSR2);
  deadline_ = Clock::now() + kStackDumpGrace;
}

void ProcessWatch::stop(bool timed_out, int interrupted) {
  exit_.timed_out = (timed_out || dumping_) && !interrupted;
  exit_.interrupted_by = interrupted;
  kill();
}

void ProcessWatch::kill() {
  signal_all_(SIGKILL);
  killed_ = true;
}

// A job that wrote past the quota between two measures and then ended is over it all the same.
void ProcessWatch::finish() {
  exit_.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  if (!killed_ && disk_.measure() == DiskWatch::Over::Quota) {
    exit_.disk_full = true;
    exit_.written_bytes = disk_.written_bytes();
  }
}

}  // namespace preflight::sandbox
