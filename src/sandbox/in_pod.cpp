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

// Takes the write bits off everything below `dir` and `dir` itself (links are left alone):
// the platform's read-only places stay read-only to the job, which runs as their owner here.
void make_read_only(const fs::path& dir) {
  std::error_code ec;
  const auto no_write = fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_symlink(ec)) fs::permissions(it->path(), no_write, fs::perm_options::remove, ec);
  }
  fs::permissions(dir, no_write, fs::perm_options::remove, ec);
}

// What to do in the pod's own words: the folder the plan needs is not one the pod gives.
Error missing_volume(const std::string& destination, const std::string& why) {
  return Error::runtime(fmt::format(
      "{}: {}; the pod must give the job this folder, as an emptyDir mounted there (docs/scale-out.md "
      "\"Kubernetes\")",
      destination, why));
}

// Puts one of the plan's mounts in place: a file copied to its destination; a folder's
// contents copied into the pod's folder at the destination, unless that folder is read-only
// already (the pod's init container filled it and it is mounted readOnly).
Status place(const plan::MountPlan& mount) {
  // Kubernetes writes the pod's own /etc/hosts, naming localhost and the pod.
  if (mount.kind == Kind::PlatformFile && mount.destination == "/etc/hosts") return Ok{};
  const fs::path destination = mount.destination;
  std::error_code ec;
  if (mount.kind == Kind::PlatformFile) {
    fs::create_directories(destination.parent_path(), ec);
    fs::copy_file(mount.source, destination, fs::copy_options::overwrite_existing, ec);
    if (ec)
      return missing_volume(destination.parent_path().string(),
                            "cannot write the platform's file: " + ec.message());
    if (mount.read_only)
      fs::permissions(destination, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read,
                      ec);
    return Ok{};
  }
  fs::create_directories(destination, ec);
  if (!fs::is_directory(destination, ec))
    return missing_volume(mount.destination, "not a folder in this pod");
  // Written folders start empty, as their sources in the run folder are; a copy-on-write
  // code folder starts as the code.
  const bool fill = mount.read_only || !mount.overlay_dir.empty();
  if (!fill) {
    if (!writable(destination)) return missing_volume(mount.destination, "the job may not write it here");
    return Ok{};
  }
  if (!writable(destination)) {
    if (fs::is_empty(destination, ec) && !fs::is_empty(mount.source, ec))
      return missing_volume(mount.destination, "it is read-only and empty: nothing filled it");
    return Ok{};
  }
  fs::copy(mount.source, destination, kCopyTree, ec);
  if (ec)
    return Error::runtime(
        fmt::format("cannot copy {} into {}: {}", mount.source.string(), mount.destination, ec.message()));
  if (mount.read_only) make_read_only(destination);
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
    if (auto placed = place(mount); !placed) return std::move(placed).error();
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
