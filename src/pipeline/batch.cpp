#include "pipeline/batch.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <thread>

#include "pipeline/collect.hpp"
#include "sandbox/interrupt.hpp"
#include "util/untrusted_fs.hpp"

extern char** environ;

namespace preflight::pipeline {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The name a run's files take: the job's folder for a job.yaml, else the file's stem, in the
// characters every file system and shell takes as they are.
std::string file_name_of(const fs::path& job) {
  const fs::path named =
      job.filename() == "job.yaml" && job.has_parent_path() ? job.parent_path().filename() : job.stem();
  std::string name = named.string().substr(0, 64);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return name.empty() ? "job" : name;
}

Status prepare_reports_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error::bad_input("cannot make the reports folder " + dir.string() + ": " + ec.message());
  if (!fs::is_directory(dir)) return Error::bad_input(dir.string() + " is not a folder");
  if (!fs::is_empty(dir, ec) || ec)
    return Error::bad_input("the reports folder " + dir.string() +
                            " holds files already: give a new or empty one, so that its reports are this "
                            "batch's alone");
  return Ok{};
}

// A child with its output in its log, in a process group of its own, and a pidfd to wait on.
struct Child {
  pid_t pid = -1;
  UniqueFd pidfd;
};

Result<Child> spawn_run(const JobRun& run, const std::vector<std::string>& run_args) {
  std::vector<std::string> args = {"preflight", "run", run.job.string(), "--json", run.report.string()};
  args.insert(args.end(), run_args.begin(), run_args.end());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attributes);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, run.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  // Its own process group: a terminal's Ctrl-C reaches the batch alone, which passes it on once.
  posix_spawnattr_setpgroup(&attributes, 0);
  // The batch's handlers catch SIGINT and SIGTERM; the run installs its own.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGHUP);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  Child child;
  const int failed = posix_spawn(&child.pid, "/proc/self/exe", &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (failed != 0) return Error::runtime(std::string("cannot start preflight run: ") + std::strerror(failed));
  child.pidfd = open_pidfd(child.pid);
  if (!child.pidfd.valid()) {
    const int error = errno;
    ::kill(child.pid, SIGKILL);
    ::waitpid(child.pid, nullptr, 0);
    return Error::runtime(std::string("cannot watch preflight run (pidfd_open): ") + std::strerror(error));
  }
  return child;
}

// The exit status a shell would give: the child's, or 128+N when signal N ended it.
int reap(const Child& child) {
  siginfo_t info{};
  while (::waitid(P_PIDFD, static_cast<id_t>(child.pidfd.get()), &info, WEXITED) != 0 && errno == EINTR) {
  }
  return info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
}

std::string ended_text(int exit_status) {
  if (exit_status > 128) return std::string("was ended by ") + strsignal(exit_status - 128);
  return "exited with status " + std::to_string(exit_status);
}

}  // namespace

int default_parallel_runs() {
  const auto cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:")
      return std::clamp(static_cast<int>(std::min<std::uint64_t>(kib * 1024 / kBatchRunMemory, 1024)), 1,
                        cores);
    meminfo.ignore(256, '\n');
  }
  return cores;
}

Result<std::vector<JobRun>> run_batch(const BatchPlan& plan, const BatchWatch& watch) {
  if (auto ready = prepare_reports_dir(plan.reports_dir); !ready) return std::move(ready).error();
  std::vector<JobRun> runs(plan.jobs.size());
  const std::size_t width = std::to_string(plan.jobs.size()).size();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::string number = std::to_string(i + 1);
    number.insert(0, width - number.size(), '0');
    const std::string stem = number + "-" + file_name_of(plan.jobs[i]);
    runs[i].job = plan.jobs[i];
    runs[i].report = plan.reports_dir / (stem + ".json");
    runs[i].log = plan.reports_dir / (stem + ".log");
  }

  sandbox::install_interrupt_handlers();
  std::vector<std::pair<std::size_t, Child>> going;
  std::size_t next = 0;
  int passed_on = 0;  // the signal passed on to the runs going on
  Status failure = Ok{};
  const auto parallel = static_cast<std::size_t>(std::max(1, plan.parallel));
  auto last_tick = Clock::now();
  while (true) {
    const int signal = sandbox::interrupt_signal();
    if (signal != 0 && passed_on == 0) {
      for (const auto& [index, child] : going) ::kill(-child.pid, signal);
      passed_on = signal;
    }
    while (signal == 0 && failure && going.size() < parallel && next < runs.size()) {
      JobRun& run = runs[next];
      auto child = spawn_run(run, plan.run_args);
      if (!child) {
        failure = std::move(child).error();
        break;
      }
      run.state = RunState::Running;
      run.started = Clock::now();
      going.emplace_back(next++, std::move(*child));
    }
    if (going.empty()) break;

    std::vector<pollfd> fds;
    fds.reserve(going.size() + 1);
    for (const auto& [index, child] : going) fds.push_back({child.pidfd.get(), POLLIN, 0});
    // Until it is passed on: the pipe stays readable after a signal.
    if (passed_on == 0) fds.push_back({sandbox::interrupt_fd(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR)
      return Error::runtime(std::string("waiting for the runs failed: ") + std::strerror(errno));
    for (std::size_t k = going.size(); k-- > 0;) {
      if (!(fds[k].revents & POLLIN)) continue;
      auto [index, child] = std::move(going[k]);
      going.erase(going.begin() + static_cast<std::ptrdiff_t>(k));
      JobRun& run = runs[index];
      run.exit_status = reap(child);
      run.state = RunState::Done;
      run.seconds = std::chrono::duration<double>(Clock::now() - run.started).count();
      if (watch) watch(runs, &run);
    }
    if (watch && Clock::now() - last_tick >= std::chrono::seconds(1)) {
      last_tick = Clock::now();
      watch(runs, nullptr);
    }
  }
  if (!failure) return std::move(failure).error();
  if (passed_on != 0)
    return Error{ErrorKind::Interrupted,
                 std::string("batch stopped by ") + strsignal(passed_on) + "; " + std::to_string(next) +
                     " of " + std::to_string(runs.size()) + " jobs were started, their reports are in " +
                     plan.reports_dir.string(),
                 {}};
  return runs;
}

report::Batch read_batch(const std::vector<JobRun>& runs, const diagnosis::Policies& policies) {
  report::Batch batch;
  for (const JobRun& run : runs) {
    if (run.state != RunState::Done) continue;
    auto read = read_report(run.report, policies, batch);
    if (read) continue;
    report::Report failed = report::error_report(
        run.job.string(),
        Error::runtime("its run " + ended_text(run.exit_status) + " without a report (" +
                       read.error().message + "); what it printed is in " + run.log.string()));
    failed.duration_s = run.seconds;
    // The folder then holds a report per job, for a later `preflight collect` of it.
    (void)report::write_json(failed, run.report);
    nlohmann::json written = report::to_json(failed);
    batch.add(run.report, std::move(failed), std::move(written));
  }
  return batch;
}

}  // namespace preflight::pipeline
