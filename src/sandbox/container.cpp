#include "sandbox/container.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <chrono>
#include <csignal>
#include <deque>
#include <fstream>
#include <utility>

#include "image/image_store.hpp"
#include "sandbox/interrupt.hpp"
#include "sandbox/oci_config.hpp"
#include "sandbox/overlay.hpp"
#include "sandbox/pid_namespace.hpp"
#include "sandbox/process_watch.hpp"
#include "sandbox/sealed_binds.hpp"
#include "util/host_root.hpp"
#include "util/text.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::sandbox {
namespace fs = std::filesystem;
namespace bp = boost::process;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kCgroupParent = "preflight";

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

// `runtime delete --force` of the container `id`, and its cgroups as root; whether the
// runtime exited 0, which is not yet that the container is gone (delete_container).
bool force_delete(const std::string& id) { return ContainerDeletion(id).finish(); }

// Deletes the container (killing what is left of it) when this goes out of scope: this
// process's own container, which it may always delete. A container whose first process has
// ended and been waited for is handed to a ContainerDeletion instead (delete_later).
class ContainerGuard {
 public:
  explicit ContainerGuard(std::string id) : id_(std::move(id)) {}
  ContainerGuard(const ContainerGuard&) = delete;
  ContainerGuard& operator=(const ContainerGuard&) = delete;
  ~ContainerGuard() {
    if (!id_.empty()) force_delete(id_);
  }

  // The runtime's delete, started and not waited for; this guard then deletes nothing.
  ContainerDeletion delete_later() { return ContainerDeletion(std::exchange(id_, {})); }

 private:
  std::string id_;
};

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

// The container's root, mounted for as long as this lives: an overlay over the image whose
// upper layer takes the job's writes, the copy-on-write mounts, the user's folders in it, and
// the image's sealed folders bound over it (unmounted first).
struct MountedRoot {
  Overlay root;
  std::deque<Overlay> copy_on_write;
  SealedBinds sealed;
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
    // A Preflight killed while the runtime is still starting the container takes the runtime
    // with it: else the runtime would go on to start the job after the next Preflight (or
    // `cache prune`) had reaped the run, and the job would run on with nothing to stop it.
    const pid_t preflight = ::getpid();
    auto launch_with = [&](auto&& stdin_spec) {
      bp::child launch(
          runtime.program.string(), bp::args(args), stdin_spec, bp::std_out > out.pipe,
          bp::std_err > err.pipe, bp::extend::on_exec_setup = [preflight](auto&) {
            if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != preflight) ::_exit(127);
          });
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

}  // namespace

struct ContainerDeletion::Runtime {
  bp::child process;
};

ContainerDeletion::ContainerDeletion() = default;

ContainerDeletion::ContainerDeletion(std::string id) : id_(std::move(id)) {
  const sandbox::Runtime runtime = runtime_for_this_user(find_runtime());
  if (runtime.program.empty()) return;
  try {
    runtime_ = std::make_unique<Runtime>(
        Runtime{bp::child(runtime.program.string(), bp::args(runtime.arguments({"delete", "--force", id_})),
                          bp::std_in<bp::null, bp::std_out> bp::null, bp::std_err > bp::null)});
  } catch (const bp::process_error&) {
    // Not started: the cgroups still go (finish).
  }
}

ContainerDeletion::ContainerDeletion(ContainerDeletion&& other) noexcept = default;

ContainerDeletion& ContainerDeletion::operator=(ContainerDeletion&& other) noexcept {
  if (this != &other) {
    finish();
    id_ = std::move(other.id_);
    runtime_ = std::move(other.runtime_);
  }
  return *this;
}

ContainerDeletion::~ContainerDeletion() { finish(); }

bool ContainerDeletion::finish() {
  bool deleted = false;
  if (runtime_) {
    std::error_code ec;
    runtime_->process.wait(ec);
    deleted = !ec && runtime_->process.exit_code() == 0;
    runtime_.reset();
  }
  if (!id_.empty() && is_host_root()) remove_cgroups(id_);
  id_.clear();
  return deleted;
}

bool delete_container(const std::string& id) {
  // runc's `delete --force` exits 0 when it could not signal the container's process, from a
  // user namespace that has no say over the container's ("container still running"): the
  // container is deleted only when the runtime no longer knows it.
  return force_delete(id) && !container_exists(id);
}

bool container_exists(const std::string& id) {
  const Runtime runtime = runtime_for_this_user(find_runtime());
  return !runtime.program.empty() && run_runtime(runtime, {"state", id}).status == 0;
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
  deleting_.finish();  // the last run's container
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
  const nlohmann::json config = make_oci_config(plan, mounted.root.path(), cgroup_path);
  mounted.sealed.mount(image_rootfs, mounted.root.path(),
                       sealed_folders_to_bind(plan, mounted.root.path(), places_touched(config, plan)));
  std::ofstream(plan.layout().bundle() / "config.json") << config.dump(2);

  OutputPipe out(model::OutputLine::Stream::Stdout, max_line_bytes);
  OutputPipe err(model::OutputLine::Stream::Stderr, max_line_bytes);
  ContainerGuard guard(plan.container_id);
  const auto started = Clock::now();
  auto pid = start_container(runtime, plan, out, err);
  if (!pid) return std::move(pid).error();
  const UniqueFd pidfd = open_pidfd(*pid);
  if (!pidfd.valid())
    return Error::runtime(
        fmt::format("cannot follow the container's process {}: {}", *pid, std::strerror(errno)));

  ProcessWatch watch(plan, *pid, started,
                     [&](int signal) { signal_container(runtime, plan.container_id, *pid, signal); });
  ContainerExit exit = watch.follow(pidfd.get(), out, err, on_line);
  if (cgroup_path)
    read_memory_cgroup(*cgroup_path, exit);
  else
    exit.unenforced = unenforced_limits(plan.limits);
  // Reap processes re-parented to us on their way out (the runtime's helpers), before the
  // runtime's delete is started: this loop must not reap it.
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  // The container's processes are gone (its first process ended, and with it its pid
  // namespace): what is left is the runtime's state and the cgroup, read above. Their
  // deletion (8 ms of a warm run) goes on while the caller reads the run folder and reports.
  deleting_ = guard.delete_later();
  return exit;
}

Runc::Runc() = default;
Runc::~Runc() = default;

}  // namespace preflight::sandbox
