#include "sandbox/pid_namespace.hpp"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace preflight::sandbox {
namespace fs = std::filesystem;

namespace {

std::string pid_namespace_of(const fs::path& process) {
  std::error_code ec;
  return fs::read_symlink(process / "ns" / "pid", ec).string();
}

}  // namespace

int signal_pid_namespace(pid_t member, int signal) {
  const std::string target = pid_namespace_of(fs::path("/proc") / std::to_string(member));
  if (target.empty()) return 0;
  int signalled = 0;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const pid_t pid = static_cast<pid_t>(std::strtol(name.c_str(), nullptr, 10));
    if (pid <= 0 || pid_namespace_of(it->path()) != target) continue;
    if (::kill(pid, signal) == 0) ++signalled;
  }
  return signalled;
}

}  // namespace preflight::sandbox
