// What every runtime does around the job's process, whatever starts it (runc, or Preflight
// itself in a pod): the run folder made ready, the job's output read line by line, and the
// process followed to its end, stopped at the deadline (after asking the harness for its
// stacks), on Ctrl-C, or when its files outgrow the platform's disk or the host's.
#pragma once

#include <sys/types.h>

#include <boost/process/pipe.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "plan/run_plan.hpp"
#include "sandbox/disk_watch.hpp"
#include "sandbox/runtime.hpp"

namespace preflight::sandbox {

// A pipe whose read end stays with us and whose write end goes to the job.
struct OutputPipe {
  OutputPipe(model::OutputLine::Stream stream, std::size_t max_line) : stream(stream), max_line(max_line) {}

  boost::process::pipe pipe;
  model::OutputLine::Stream stream;
  std::size_t max_line;
  std::string line;  // the current line so far, at most max_line
  bool cut = false;  // the current line is longer: what follows is dropped up to its newline
  bool open = true;

  // Closes our copy of the write end, once the job has its own.
  void close_sink();
  // Reads what is there and hands complete lines on; false at end of file. Each byte is
  // looked at once.
  bool drain(const LineSink& on_line);

 private:
  void take(std::string_view part);
};

// Makes the plan's folders in the run folder (owned by the job's user) and writes its files.
Status prepare_run_dir(const plan::RunPlan& plan);

// Memory facts (peak, OOM kill) from the cgroup at `cgroup_path` (v1 or v2), read before the
// cgroup goes.
void read_memory_cgroup(const std::string& cgroup_path, ContainerExit& exit);

// Follows a started job to its end: hands on what it prints, reaps its process `pid` (a child
// of ours), and stops it at the deadline (asking the harness for its stacks first), on Ctrl-C,
// or when its files outgrow the platform's disk or the host's. `signal_all` signals every
// process of the job.
class ProcessWatch {
 public:
  using Clock = std::chrono::steady_clock;
  using Signaller = std::function<void(int signal)>;

  ProcessWatch(const plan::RunPlan& plan, pid_t pid, Clock::time_point started, Signaller signal_all);

  // Until the process has exited and its output ended; once it is killed, until stray
  // holders of the pipes go quiet. `pidfd` is the process's (open_pidfd).
  ContainerExit follow(int pidfd, OutputPipe& out, OutputPipe& err, const LineSink& on_line);

 private:
  std::optional<int> wait(int pidfd, OutputPipe& out, OutputPipe& err, const LineSink& on_line);
  void reap();
  void watch_disk();
  void ask_for_stacks();
  void stop(bool timed_out, int interrupted);
  void kill();
  void finish();

  const plan::RunPlan& plan_;
  pid_t pid_;
  Clock::time_point started_;
  Clock::time_point deadline_;
  Signaller signal_all_;
  DiskWatch disk_;
  ContainerExit exit_;
  bool exited_ = false;
  bool killed_ = false;
  bool dumping_ = false;
};

}  // namespace preflight::sandbox
