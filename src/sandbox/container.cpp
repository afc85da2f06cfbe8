#include "sandbox/container.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

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
  Overlay root;
  const model::RunLayout layout = plan.layout();
  if (auto status = root.mount(image_rootfs, layout.upper(), layout.overlay_work(), layout.rootfs()); !status)
    return std::move(status).error();
  std::deque<Overlay> code_overlays;
  if (auto status = mount_copy_on_write(plan, code_overlays); !status) return std::move(status).error();
  if (auto status = prepare_root(plan, root.path()); !status) return std::move(status).error();

  // Only root on the host has a cgroup to enforce the platform's limits in; a rootless run
  // goes without and its report says so.
  std::optional<std::string> cgroup_path;
  if (is_host_root()) cgroup_path = fmt::format("/{}/{}", kCgroupParent, plan.container_id);
  const fs::path bundle = layout.bundle();
  std::ofstream(bundle / "config.json") << make_oci_config(plan, root.path(), cgroup_path).dump(2);

  OutputPipe out{{}, model::OutputLine::Stream::Stdout, max_line_bytes, {}, false, true};
  OutputPipe err{{}, model::OutputLine::Stream::Stderr, max_line_bytes, {}, false, true};
  const fs::path pid_file = layout.container_pid();
  ContainerGuard guard(plan.container_id);
  const auto started = Clock::now();
  int launch_status = -1;
  try {
    // Detached: the runtime starts the container and exits; its process, re-parented to us,
    // is ours to wait for, and its cgroup stays until `delete`, to be read.
    // The runtime's standard streams become the container process's.
    const auto args = runtime.arguments(
        {"run", "--detach", "--bundle", bundle.string(), "--pid-file", pid_file.string(), plan.container_id});
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
  pid_t pid = std::atoi(read_file(pid_file).value_or("").c_str());
  const UniqueFd pidfd(pid > 0 ? pidfd_open(pid) : -1);
  if (pidfd.get() < 0)
    return Error::runtime("cannot follow the container's process (pid file " + pid_file.string() + ")");

  ContainerExit exit;
  if (!cgroup_path) exit.unenforced = unenforced_limits(plan.limits);
  auto deadline = started + plan.timeout;
  DiskWatch disk(plan, started);
  bool exited = false, killed = false, dumping = false;
  while (!exited || out.open || err.open) {
    std::vector<pollfd> fds;
    if (out.open) fds.push_back({out.pipe.native_source(), POLLIN, 0});
    if (err.open) fds.push_back({err.pipe.native_source(), POLLIN, 0});
    if (!exited) fds.push_back({pidfd.get(), POLLIN, 0});
    if (!killed) fds.push_back({interrupt_fd(), POLLIN, 0});  // it stays readable once signalled
    // Woken at the deadline, or earlier when the disk is due a measure.
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::min(deadline, disk.due()) - Clock::now())
            .count();
    int ready = ::poll(fds.data(), fds.size(), killed ? 1000 : static_cast<int>(std::max<long>(left, 0)));
    if (ready < 0 && errno != EINTR) break;
    for (const auto& fd : fds) {
      if (!(fd.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (fd.fd == out.pipe.native_source())
        out.drain(on_line);
      else if (fd.fd == err.pipe.native_source())
        err.drain(on_line);
    }
    if (!exited) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) {
          exit.signal = WTERMSIG(status);
          exit.exit_code = 128 + exit.signal;
        }
      }
    }
    bool timed_out = !exited && Clock::now() >= deadline;
    int interrupted = interrupt_signal();
    if (!killed && !exited && !timed_out && !interrupted) {
      if (const auto over = disk.check(Clock::now()); over != DiskWatch::Over::Nothing) {
        exit.disk_full = over == DiskWatch::Over::Quota;
        exit.host_disk_low = over == DiskWatch::Over::HostDisk;
        exit.written_bytes = disk.written_bytes();
        exit.host_free_bytes = disk.free_bytes();
        signal_container(runtime, plan.container_id, pid, SIGKILL);
        killed = true;
      }
    }
    if (timed_out && !dumping && !interrupted && plan.harness) {
      // The harness writes where each process is on SIGUSR2 (docs/harness.md "Where a job
      // hangs"); it gets a moment to do so before the kill.
      dumping = true;
      exit.timed_out = true;
      signal_container(runtime, plan.container_id, pid, SIGUSR2);
      deadline = Clock::now() + kStackDumpGrace;
      continue;
    }
    if (!killed && !exited && (timed_out || interrupted)) {
      exit.timed_out = (timed_out || dumping) && !interrupted;
      exit.interrupted_by = interrupted;
      signal_container(runtime, plan.container_id, pid, SIGKILL);
      killed = true;
    }
    if (killed && exited && (out.open || err.open) && ready == 0) break;  // stray holders of the pipes
  }
  exit.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  // A job that wrote past the quota between two measures and then ended is over it all the same.
  if (!killed && disk.measure() == DiskWatch::Over::Quota) {
    exit.disk_full = true;
    exit.written_bytes = disk.written_bytes();
  }
  if (cgroup_path) read_memory_cgroup(*cgroup_path, exit);
  // Reap processes re-parented to us on their way out (the runtime's helpers).
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  return exit;
}

}  // namespace preflight::sandbox
