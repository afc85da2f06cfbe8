#include "sandbox/user_namespace.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <charconv>
#include <csignal>
#include <cstring>
#include <sstream>

#include "image/image_store.hpp"
#include "sandbox/run_folder.hpp"
#include "util/host_root.hpp"
#include "util/text.hpp"

namespace preflight::sandbox {
namespace bp = boost::process;

namespace {

volatile sig_atomic_t forward_to = 0;

void forward_signal(int signal) {
  if (forward_to > 0) ::kill(forward_to, signal);
}

// A pipe's two ends, closed when this goes out of scope.
struct Pipe {
  int read = -1;
  int write = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) == 0) {
      read = fds[0];
      write = fds[1];
    }
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_read() {
    if (read >= 0) ::close(read);
    read = -1;
  }
  void close_write() {
    if (write >= 0) ::close(write);
    write = -1;
  }
};

std::string user_name(uid_t uid) {
  const passwd* entry = ::getpwuid(uid);
  return entry ? entry->pw_name : std::to_string(uid);
}

// The subordinate ids of the user in `file`, or what to do when there are too few.
Result<IdRange> subordinate_ids(const char* file, const std::string& user, uid_t uid) {
  auto range = subordinate_range(read_file(file).value_or(""), user, uid);
  if (range && range->count >= kSubordinateIdsNeeded) return *range;
  return Error::runtime(fmt::format(
      "running a container without root needs {} subordinate ids for {} in {} (found {}): as root, run "
      "usermod --add-subuids 100000-165535 --add-subgids 100000-165535 {} (docs/rootless.md)",
      kSubordinateIdsNeeded, user, file, range ? range->count : 0, user));
}

Status write_id_map(const std::string& tool, const std::vector<std::string>& args) {
  std::string messages;
  int status = -1;
  try {
    bp::ipstream err;
    bp::child child(tool, bp::args(args), bp::std_in<bp::null, bp::std_out> bp::null, bp::std_err > err);
    for (std::string line; std::getline(err, line);) messages += line + " ";
    child.wait();
    status = child.exit_code();
  } catch (const bp::process_error& e) {
    messages = e.what();
  }
  if (status == 0) return Ok{};
  return Error::runtime(fmt::format("{} failed: {}(docs/rootless.md)", tool, messages));
}

// In the child: waits for its id maps, then keeps its mounts to itself.
void become_root_in_namespace(Pipe& ready, Pipe& go, pid_t parent) {
  ready.close_read();
  go.close_write();
  char failed = ::unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 ? 0 : static_cast<char>(errno);
  (void)!::write(ready.write, &failed, 1);
  ready.close_write();
  char answer = 0;
  if (failed || ::read(go.read, &answer, 1) != 1) ::_exit(3);  // the parent reported why
  go.close_read();
  // The overlay root mounted later must not propagate anywhere.
  ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr);
  // Preflight's parent holds the terminal's exit status: without it, stop (and clean up).
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(3);
}

bool parse_id(const std::string& text, unsigned& value) {
  const char* end = text.data() + text.size();
  auto [at, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && at == end && !text.empty();
}

// The containers of runs and checks whose process in the namespace died (a SIGKILL leaves it
// no time to stop them) run on in that namespace, where no later namespace may signal them:
// the user outside, who owns them all, stops them (docs/security.md "Crash-safe lifecycle").
void stop_what_dead_runs_left() {
  const std::filesystem::path cache = image::default_cache_dir();
  for (const char* folder : {"runs", "checks"}) stop_abandoned_containers(cache / folder);
}

int wait_forwarding_signals(pid_t child) {
  forward_to = child;
  struct sigaction action {};
  action.sa_handler = forward_signal;
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(signal, &action, nullptr);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace

std::optional<IdRange> subordinate_range(std::string_view file_text, std::string_view user, unsigned id) {
  std::istringstream in{std::string(file_text)};
  const std::string numeric = std::to_string(id);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string name, first, count;
    if (!std::getline(fields, name, ':') || !std::getline(fields, first, ':') || !std::getline(fields, count))
      continue;
    if (name != user && name != numeric) continue;
    IdRange range;
    if (parse_id(first, range.first) && parse_id(count, range.count)) return range;
  }
  return std::nullopt;
}

std::vector<std::string> id_map_arguments(pid_t pid, unsigned own_id, IdRange subordinate) {
  return {std::to_string(pid),
          "0",
          std::to_string(own_id),
          "1",
          "1",
          std::to_string(subordinate.first),
          std::to_string(subordinate.count)};
}

Result<std::optional<int>> enter_user_namespace() {
  // Root on the host needs none; root in a user namespace is in one already.
  if (::geteuid() == 0) return std::optional<int>{};
  const auto newuidmap = bp::search_path("newuidmap"), newgidmap = bp::search_path("newgidmap");
  if (newuidmap.empty() || newgidmap.empty())
    return Error::runtime(
        "running a container without root needs newuidmap and newgidmap: install uidmap (apt-get install "
        "uidmap), or run preflight as root (docs/rootless.md)");
  const uid_t uid = ::getuid();
  const std::string user = user_name(uid);
  auto uids = subordinate_ids("/etc/subuid", user, uid);
  if (!uids) return std::move(uids).error();
  auto gids = subordinate_ids("/etc/subgid", user, uid);
  if (!gids) return std::move(gids).error();

  stop_what_dead_runs_left();  // by a Preflight killed with its process in the namespace
  Pipe ready, go;
  if (ready.read < 0 || go.read < 0)
    return Error::runtime(std::string("cannot make a pipe: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) return Error::runtime(std::string("cannot fork: ") + std::strerror(errno));
  if (child == 0) {
    become_root_in_namespace(ready, go, parent);
    return std::optional<int>{};
  }
  ready.close_write();
  go.close_read();
  char failed = 0;
  if (::read(ready.read, &failed, 1) != 1) failed = EIO;
  Status mapped = failed ? Status(Error::runtime(fmt::format(
                               "cannot create a user namespace: {}; are unprivileged user namespaces "
                               "allowed (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone)?",
                               std::strerror(failed))))
                         : write_id_map(newuidmap.string(), id_map_arguments(child, uid, *uids));
  if (mapped) mapped = write_id_map(newgidmap.string(), id_map_arguments(child, ::getgid(), *gids));
  if (!mapped) {
    go.close_write();  // the child exits without going on
    ::waitpid(child, nullptr, 0);
    return std::move(mapped).error();
  }
  (void)!::write(go.write, "1", 1);
  go.close_write();
  const int exit_status = wait_forwarding_signals(child);
  stop_what_dead_runs_left();  // the child's, when it was killed
  return std::optional<int>{exit_status};
}

}  // namespace preflight::sandbox
