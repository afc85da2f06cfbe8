#include "sandbox/container.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <chrono>
#include <csignal>
#include <deque>
#include <fstream>

#include "image/image_store.hpp"
#include "sandbox/disk_watch.hpp"
#include "sandbox/interrupt.hpp"
#include "sandbox/oci_config.hpp"
#include "sandbox/overlay.hpp"
#include "sandbox/pid_namespace.hpp"
#include "util/host_root.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::sandbox {
namespace fs = std::filesystem;
namespace bp = boost::process;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kCgroupParent = "preflight";
// From the SIGUSR2 of a timed-out run to its kill: time for the harness to write its stacks.
constexpr std::chrono::milliseconds kStackDumpGrace{500};

// The OCI runtime and the global options every one of its commands takes.
struct Runtime {
  fs::path program;
  std::vector<std::string> options;
  bool rootless = false;

  std::vector<std::string> arguments(std::initializer_list<std::string> command) const {
    std::vector<std::string> args = options;
    args.insert(args.end(), command);
    return args;
  }
};

// Without root on the host (in Preflight's user namespace, docs/rootless.md), runc keeps its
// state in the user's cache, since /run/runc is not the user's, and is told to expect no
// cgroup of its own.
Runtime runtime_for_this_user(fs::path program) {
  if (is_host_root()) return {std::move(program), {}, false};
  return {std::move(program),
          {"--root", (image::default_cache_dir() / "runc").string(), "--rootless=true"},
          true};
}

// Runs a runtime subcommand to completion, returning its exit status and stderr.
struct CommandResult {
  int status = -1;
  std::string err;
};

CommandResult run_runtime(const Runtime& runtime, std::initializer_list<std::string> command) {
  CommandResult result;
  try {
    bp::ipstream err;
    bp::child child(runtime.program.string(), bp::args(runtime.arguments(command)),
                    bp::std_in<bp::null, bp::std_out> bp::null, bp::std_err > err);
    std::string line;
    while (std::getline(err, line)) result.err += line + "\n";
    child.wait();
    result.status = child.exit_code();
  } catch (const bp::process_error& e) {
    result.err = e.what();
  }
  return result;
}

// Signals every process of the container `id` whose first process is `pid`: through its
// cgroup (runc kill --all) as root, through its pid namespace in a rootless run.
void signal_container(const Runtime& runtime, const std::string& id, pid_t pid, int signal) {
  if (runtime.rootless)
    signal_pid_namespace(pid, signal);
  else
    run_runtime(runtime, {"kill", "--all", id, sigabbrev_np(signal)});
}

// Removes the cgroup of the container `id` (killing what is left in it: cgroup v2's
// cgroup.kill). The shared parent stays: removing it when empty raced with a concurrent run
// whose runc had made the parent in one controller and was about to make its own in it.
void remove_cgroups(const std::string& id) {
  const fs::path v2 = fs::path("/sys/fs/cgroup") / kCgroupParent / id;
  if (std::ofstream kill{v2 / "cgroup.kill"}; kill << "1" << std::flush) {
    for (int i = 0; i < 50 && ::rmdir(v2.c_str()) != 0 && errno == EBUSY; ++i) ::usleep(20000);
  }
  std::error_code ignored;
  for (const auto& controller : fs::directory_iterator("/sys/fs/cgroup", ignored)) {
    ::rmdir((controller.path() / kCgroupParent / id).c_str());
  }
}

// Deletes the container (killing what is left of it) when this goes out of scope.
class ContainerGuard {
 public:
  explicit ContainerGuard(std::string id) : id_(std::move(id)) {}
  ~ContainerGuard() { delete_container(id_); }

 private:
  std::string id_;
};

// A pipe whose read end stays with us and whose write end goes to the container.
struct OutputPipe {
  bp::pipe pipe;
  model::OutputLine::Stream stream;
  std::size_t max_line;
  std::string line;  // the current line so far, at most max_line
  bool cut = false;  // the current line is longer: what follows is dropped up to its newline
  bool open = true;

  void close_sink() {
    ::close(pipe.native_sink());
    pipe.assign_sink(-1);
  }
  void take(std::string_view part) {
    if (cut) return;
    const std::size_t room = max_line - line.size();
    cut = part.size() > room;
    line.append(part.substr(0, room));
  }
  // Reads what is there and hands complete lines on; false at end of file. Each byte is
  // looked at once.
  bool drain(const LineSink& on_line) {
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
};

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

// The folders the platform gives the job's user (home, writable folders, scratch) exist in
// the container's root. They land in the overlay's upper layer only, each made and owned
// through a descriptor resolved in the root: a link in the image never leads onto the host.
Status prepare_root(const plan::RunPlan& plan, const fs::path& root) {
  auto root_fd = open_folder(root);
  if (!root_fd) return std::move(root_fd).error();
  for (const auto& dir : plan.user_dirs) {
    if (auto made = make_folder_in_root(root_fd->get(), dir.path, plan.process.uid, plan.process.gid,
                                        dir.own_existing);
        !made)
      return made;
  }
  return Ok{};
}

// Reads "key N" from a cgroup's flat-keyed file; 0 when absent.
std::uint64_t cgroup_value(const std::string& text, const std::string& key) {
  auto at = text.find(key + " ");
  if (at == std::string::npos || (at > 0 && text[at - 1] != '\n')) return 0;
  return std::strtoull(text.c_str() + at + key.size() + 1, nullptr, 10);
}

// Memory facts from the container's cgroup, read before the runtime removes it (v1 or v2).
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

// The container's root, mounted for as long as this lives: an overlay over the image whose
// upper layer takes the job's writes, the copy-on-write mounts, the user's folders in it.
struct MountedRoot {
  Overlay root;
  std::deque<Overlay> copy_on_write;
};

Status mount_root(const plan::RunPlan& plan, const fs::path& image_rootfs, MountedRoot& mounted) {
  const model::RunLayout layout = plan.layout();
  if (auto status = mounted.root.mount(image_rootfs, layout.upper(), layout.overlay_work(), layout.rootfs());
      !status)
    return status;
  if (auto status = mount_copy_on_write(plan, mounted.copy_on_write); !status) return status;
  return prepare_root(plan, mounted.root.path());
}

// Starts the container of the bundle in the run folder, detached: the runtime starts it and
// exits, its standard streams (`out`, `err`) becoming the container process's; that process,
// re-parented to us, is ours to wait for, and its cgroup stays until `delete`, to be read.
// The process's pid.
Result<pid_t> start_container(const Runtime& runtime, const plan::RunPlan& plan, OutputPipe& out,
                              OutputPipe& err) {
  const model::RunLayout layout = plan.layout();
  int launch_status = -1;
  try {
    const auto args = runtime.arguments({"run", "--detach", "--bundle", layout.bundle().string(),
                                         "--pid-file", layout.container_pid().string(), plan.container_id});
    auto launch_with = [&](auto&& stdin_spec) {
      bp::child launch(runtime.program.string(), bp::args(args), stdin_spec, bp::std_out > out.pipe,
                       bp::std_err > err.pipe);
      launch.wait();
      return launch.exit_code();
    };
    launch_status = plan.stdin_file.empty() ? launch_with(bp::std_in < bp::null)
                                            : launch_with(bp::std_in < plan.stdin_file.string());
  } catch (const bp::process_error& e) {
    return Error::runtime(fmt::format("cannot start {}: {}", runtime.program.string(), e.what()));
  }
  out.close_sink();
  err.close_sink();
  if (launch_status != 0) {
    std::string message;
    ::fcntl(err.pipe.native_source(), F_SETFL, O_NONBLOCK);
    err.drain([&](auto, std::string_view line) { message += std::string(line) + "\n"; });
    return Error::runtime(fmt::format("{} run failed (exit {}): {}", runtime.program.filename().string(),
                                      launch_status, message));
  }
  const pid_t pid = std::atoi(read_file(layout.container_pid()).value_or("").c_str());
  if (pid <= 0)
    return Error::runtime("cannot follow the container's process (pid file " +
                          layout.container_pid().string() + ")");
  return pid;
}

// Follows a started container to its end: hands on what it prints, reaps its process, and
// stops it at the deadline (asking the harness for its stacks first), on Ctrl-C, or when its
// files outgrow the platform's disk or the host's.
class ContainerWatch {
 public:
  ContainerWatch(const Runtime& runtime, const plan::RunPlan& plan, pid_t pid, Clock::time_point started)
      : runtime_(runtime),
        plan_(plan),
        pid_(pid),
        started_(started),
        deadline_(started + plan.timeout),
        disk_(plan, started) {}

  // Until the process has exited and its output ended; once it is killed, until stray
  // holders of the pipes go quiet.
  ContainerExit follow(int pidfd, OutputPipe& out, OutputPipe& err, const LineSink& on_line) {
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

 private:
  // Waits for output, the process's end, Ctrl-C, the deadline or the disk's next measure, and
  // hands on what was printed. poll's count (-1 when a signal cut it short); nullopt when
  // poll itself failed.
  std::optional<int> wait(int pidfd, OutputPipe& out, OutputPipe& err, const LineSink& on_line) {
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

  void reap() {
    int status = 0;
    if (exited_ || ::waitpid(pid_, &status, WNOHANG) != pid_) return;
    exited_ = true;
    if (WIFEXITED(status)) exit_.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
      exit_.signal = WTERMSIG(status);
      exit_.exit_code = 128 + exit_.signal;
    }
  }

  void watch_disk() {
    const auto over = disk_.check(Clock::now());
    if (over == DiskWatch::Over::Nothing) return;
    exit_.disk_full = over == DiskWatch::Over::Quota;
    exit_.host_disk_low = over == DiskWatch::Over::HostDisk;
    exit_.written_bytes = disk_.written_bytes();
    exit_.host_free_bytes = disk_.free_bytes();
    kill();
  }

  // The harness writes where each process is on SIGUSR2 (docs/harness.md "Where a job
  // hangs"); it gets a moment to do so before the kill.
  void ask_for_stacks() {
    dumping_ = true;
    exit_.timed_out = true;
    signal_container(runtime_, plan_.container_id, pid_, SIGUSR2);
    deadline_ = Clock::now() + kStackDumpGrace;
  }

  void stop(bool timed_out, int interrupted) {
    exit_.timed_out = (timed_out || dumping_) && !interrupted;
    exit_.interrupted_by = interrupted;
    kill();
  }

  void kill() {
    signal_container(runtime_, plan_.container_id, pid_, SIGKILL);
    killed_ = true;
  }

  // A job that wrote past the quota between two measures and then ended is over it all the same.
  void finish() {
    exit_.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
    if (!killed_ && disk_.measure() == DiskWatch::Over::Quota) {
      exit_.disk_full = true;
      exit_.written_bytes = disk_.written_bytes();
    }
  }

  const Runtime& runtime_;
  const plan::RunPlan& plan_;
  pid_t pid_;
  Clock::time_point started_;
  Clock::time_point deadline_;
  DiskWatch disk_;
  ContainerExit exit_;
  bool exited_ = false;
  bool killed_ = false;
  bool dumping_ = false;
};

}  // namespace

bool delete_container(const std::string& id) {
  const Runtime runtime = runtime_for_this_user(find_runtime());
  const bool existed =
      !runtime.program.empty() && run_runtime(runtime, {"delete", "--force", id}).status == 0;
  if (is_host_root()) remove_cgroups(id);
  return existed;
}

fs::path find_runtime() {
  if (const char* runtime = std::getenv("PREFLIGHT_RUNTIME"); runtime && *runtime) return runtime;
  return bp::search_path("runc").string();
}

Result<ContainerExit> Runc::run(const plan::RunPlan& plan, const fs::path& image_rootfs,
                                const LineSink& on_line, std::size_t max_line_bytes) {
  const Runtime runtime = runtime_for_this_user(find_runtime());
  if (runtime.program.empty())
    return Error::runtime(
        "no OCI runtime found: install runc (apt-get install runc) or set PREFLIGHT_RUNTIME");
  if (::geteuid() != 0)
    return Error::runtime(
        "running a container without root needs Preflight's user namespace (docs/rootless.md)");
  install_interrupt_handlers();
  // Adopt the container's process when the detached `runc run` exits, to wait for it and read its cgroup.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);

  if (auto status = prepare_run_dir(plan); !status) return std::move(status).error();
  MountedRoot mounted;
  if (auto status = mount_root(plan, image_rootfs, mounted); !status) return std::move(status).error();
  // Only root on the host has a cgroup to enforce the platform's limits in; a rootless run
  // goes without and its report says so.
  std::optional<std::string> cgroup_path;
  if (is_host_root()) cgroup_path = fmt::format("/{}/{}", kCgroupParent, plan.container_id);
  std::ofstream(plan.layout().bundle() / "config.json")
      << make_oci_config(plan, mounted.root.path(), cgroup_path).dump(2);

  OutputPipe out{{}, model::OutputLine::Stream::Stdout, max_line_bytes, {}, false, true};
  OutputPipe err{{}, model::OutputLine::Stream::Stderr, max_line_bytes, {}, false, true};
  ContainerGuard guard(plan.container_id);
  const auto started = Clock::now();
  auto pid = start_container(runtime, plan, out, err);
  if (!pid) return std::move(pid).error();
  const UniqueFd pidfd = open_pidfd(*pid);
  if (!pidfd.valid())
    return Error::runtime(
        fmt::format("cannot follow the container's process {}: {}", *pid, std::strerror(errno)));

  ContainerWatch watch(runtime, plan, *pid, started);
  ContainerExit exit = watch.follow(pidfd.get(), out, err, on_line);
  if (cgroup_path)
    read_memory_cgroup(*cgroup_path, exit);
  else
    exit.unenforced = unenforced_limits(plan.limits);
  // Reap processes re-parented to us on their way out (the runtime's helpers).
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  return exit;
}

}  // namespace preflight::sandbox
