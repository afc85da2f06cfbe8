#include "sandbox/in_pod.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "sandbox/interrupt.hpp"
#include "sandbox/process_watch.hpp"
#include "util/untrusted_fs.hpp"

namespace preflight::sandbox {
namespace fs = std::filesystem;

namespace {

using Kind = model::MountFact::Kind;

constexpr auto kCopyTree =
    fs::copy_options::recursive | fs::copy_options::copy_symlinks | fs::copy_options::overwrite_existing;

bool writable(const fs::path& dir) { return ::access(dir.c_str(), W_OK) == 0; }

// What to do in the pod's own words: the folder the plan needs is not one the pod gives.
Error missing_volume(const std::string& destination, const std::string& why) {
  return Error::runtime(fmt::format(
      "{}: {}; the pod must give the job this folder, as an emptyDir mounted there (docs/scale-out.md "
      "\"Kubernetes\")",
      destination, why));
}

// The folder of the pod a mount's contents go into: the destination, or a file's folder.
fs::path place_of(const plan::MountPlan& mount) {
  const fs::path destination = mount.destination;
  return mount.kind == Kind::PlatformFile ? destination.parent_path() : destination;
}

// Kubernetes writes the pod's own /etc/hosts, naming localhost and the pod.
bool pods_own(const plan::MountPlan& mount) {
  return mount.kind == Kind::PlatformFile && mount.destination == "/etc/hosts";
}

// Copies a mount's source (a file or a folder's contents) into the pod's folder for it.
Status fill(const plan::MountPlan& mount) {
  std::error_code ec;
  if (mount.kind == Kind::PlatformFile)
    fs::copy_file(mount.source, mount.destination, fs::copy_options::overwrite_existing, ec);
  else
    fs::copy(mount.source, mount.destination, kCopyTree, ec);
  if (ec)
    return Error::runtime(
        fmt::format("cannot copy {} into {}: {}", mount.source.string(), mount.destination, ec.message()));
  return Ok{};
}

// In the job's container, each place as the platform gives it: a read-only one read-only
// (mounted readOnly, filled by the init container: a folder the job owns would let it write)
// and not left empty; a written one writable, a copy-on-write code folder filled with the code.
Status check_place(const plan::MountPlan& mount) {
  if (pods_own(mount)) return Ok{};
  const fs::path place = place_of(mount);
  std::error_code ec;
  if (mount.kind != Kind::PlatformFile) fs::create_directories(place, ec);
  if (!fs::is_directory(place, ec)) return missing_volume(place.string(), "not a folder in this pod");
  if (mount.read_only) {
    if (writable(place))
      return missing_volume(
          place.string(),
          "the platform gives the job this folder read-only, but here the job may write it: "
          "mount it readOnly, filled by an init container that runs preflight run --in-pod "
          "--stage");
    if (!fs::exists(mount.destination, ec) ||
        (mount.kind != Kind::PlatformFile && fs::is_empty(place, ec) && !fs::is_empty(mount.source, ec)))
      return missing_volume(place.string(),
                            "nothing filled it: the init container runs preflight run --in-pod --stage");
    return Ok{};
  }
  if (!writable(place)) return missing_volume(place.string(), "the job may not write it here");
  if (!mount.overlay_dir.empty()) return fill(mount);
  return Ok{};
}

// The folders the platform gives the job's user in the root (home, writable folders,
// scratch): the pod's emptyDirs, or made in one.
Status place_user_dirs(const plan::RunPlan& plan) {
  std::error_code ec;
  for (const auto& dir : plan.user_dirs) {
    fs::create_directories(dir.path, ec);
    if (!fs::is_directory(dir.path, ec)) return missing_volume(dir.path, "cannot make it: " + ec.message());
  }
  return Ok{};
}

// What the job wrote into its outputs and the harness's folder, copied back to their sources
// in the run folder.
Status copy_back(const plan::RunPlan& plan) {
  for (const auto& mount : plan.mounts) {
    if (mount.read_only || !mount.overlay_dir.empty() || mount.kind == Kind::PlatformFile) continue;
    std::error_code ec;
    fs::copy(mount.destination, mount.source, kCopyTree, ec);
    if (ec)
      return Error::runtime(fmt::format("cannot copy what the job wrote in {} back to {}: {}",
                                        mount.destination, mount.source.string(), ec.message()));
  }
  return Ok{};
}

// Starts the plan's process with its environment, working folder and standard input, in a
// process group of its own, its output into the pipes.
Result<pid_t> start_process(const plan::RunPlan& plan, OutputPipe& out, OutputPipe& err) {
  std::vector<std::string> args = plan.process.args, env = plan.process.env;
  std::vector<char*> argv, envp;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  for (std::string& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  const std::string input = plan.stdin_file.empty() ? "/dev/null" : plan.stdin_file.string();

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attributes);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, input.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.pipe.native_sink(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.pipe.native_sink(), STDERR_FILENO);
  for (const int fd :
       {out.pipe.native_source(), out.pipe.native_sink(), err.pipe.native_source(), err.pipe.native_sink()})
    posix_spawn_file_actions_addclose(&actions, fd);
  posix_spawn_file_actions_addchdir_np(&actions, plan.process.cwd.c_str());
  sigset_t defaults;
  sigemptyset(&defaults);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&defaults, signal);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int failed = posix_spawn(&pid, argv.front(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  out.close_sink();
  err.close_sink();
  if (failed != 0)
    return Error::runtime(fmt::format("cannot start {} in {}: {}", plan.process.args.front(),
                                      plan.process.cwd, std::strerror(failed)));
  return pid;
}

}  // namespace

Status check_in_pod() {
  const char* service = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* stand_in = std::getenv("PREFLIGHT_IN_POD");
  if ((service && *service) || (stand_in && std::string(stand_in) == "1")) return Ok{};
  return Error::bad_input(
      "--in-pod: this is not a Kubernetes pod (KUBERNETES_SERVICE_HOST is not set): --in-pod fills the "
      "platform's folders of the machine it runs on, which only a pod made for it gives (docs/scale-out.md "
      "\"Kubernetes\"); run without --in-pod here");
}

image::ImageConfig pod_image_config(const std::vector<std::string>& environment) {
  image::ImageConfig config;
  for (const std::string& entry : environment) {
    const std::string key = entry.substr(0, entry.find('='));
    if (key.starts_with("KUBERNETES_") || key.starts_with("PREFLIGHT_") || key == "JOB_COMPLETION_INDEX" ||
        key == "HOSTNAME")
      continue;
    config.env.push_back(entry);
  }
  return config;
}

Status InPod::stage(const plan::RunPlan& plan) const {
  if (auto user = check_user(plan.process.uid, plan.process.gid); !user) return user;
  if (auto status = prepare_run_dir(plan); !status) return status;
  for (const auto& mount : plan.mounts) {
    if (!mount.read_only || pods_own(mount)) continue;
    const fs::path place = place_of(mount);
    std::error_code ec;
    if (!fs::is_directory(place, ec) || !writable(place))
      return missing_volume(place.string(), "the init container must be able to write it");
    if (auto filled = fill(mount); !filled) return filled;
  }
  return Ok{};
}

Status InPod::check_user(unsigned uid, unsigned gid) const {
  if (::geteuid() == uid && ::getegid() == gid) return Ok{};
  return Error::bad_input(
      fmt::format("this pod runs as {}:{}, but the platform runs its jobs as {}:{}: set the pod's "
                  "securityContext runAsUser "
                  "to {} and runAsGroup to {}",
                  ::geteuid(), ::getegid(), uid, gid, uid, gid));
}

Result<ContainerExit> InPod::run(const plan::RunPlan& plan, const fs::path& image_rootfs,
                                 const LineSink& on_line, std::size_t max_line_bytes) {
  if (image_rootfs != "/")
    return Error::bad_input(
        fmt::format("--in-pod runs the job on the pod's own image, not {}: use --image {}",
                    image_rootfs.string(), kPodImage));
  // Preflight's own look into the image (a plan of no platform) runs as whoever the pod runs as.
  if (!plan.platform.empty())
    if (auto user = check_user(plan.process.uid, plan.process.gid); !user) return std::move(user).error();
  install_interrupt_handlers();
  if (auto status = prepare_run_dir(plan); !status) return std::move(status).error();
  for (const auto& mount : plan.mounts)
    if (auto placed = check_place(mount); !placed) return std::move(placed).error();
  if (auto placed = place_user_dirs(plan); !placed) return std::move(placed).error();

  OutputPipe out(model::OutputLine::Stream::Stdout, max_line_bytes);
  OutputPipe err(model::OutputLine::Stream::Stderr, max_line_bytes);
  const auto started = ProcessWatch::Clock::now();
  auto pid = start_process(plan, out, err);
  if (!pid) return std::move(pid).error();
  const UniqueFd pidfd = open_pidfd(*pid);
  if (!pidfd.valid()) {
    ::kill(*pid, SIGKILL);
    ::waitpid(*pid, nullptr, 0);
    return Error::runtime(fmt::format("cannot follow the job's process {}: {}", *pid, std::strerror(errno)));
  }
  ProcessWatch watch(plan, *pid, started, [pgid = *pid](int signal) { ::killpg(pgid, signal); });
  ContainerExit exit = watch.follow(pidfd.get(), out, err, on_line);
  ::killpg(*pid, SIGKILL);        // what the job left running, as a container's end would
  read_memory_cgroup("/", exit);  // the pod container's own cgroup, in its cgroup namespace
  if (auto copied = copy_back(plan); !copied) return std::move(copied).error();
  return exit;
}

}  // namespace preflight::sandbox
