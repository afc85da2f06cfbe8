#include "sandbox/interrupt.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <csignal>

namespace preflight::sandbox {
namespace {

int wake_pipe[2] = {-1, -1};
std::atomic<int> received{0};

void on_signal(int signal) {
  int expected = 0;
  received.compare_exchange_strong(expected, signal);
  char byte = 1;
  [[maybe_unused]] auto written = ::write(wake_pipe[1], &byte, 1);
}

}  // namespace

void install_interrupt_handlers() {
  if (wake_pipe[0] >= 0) return;
  if (::pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);
}

int interrupt_fd() { return wake_pipe[0]; }
int interrupt_signal() { return received.load(); }

}  // namespace preflight::sandbox
