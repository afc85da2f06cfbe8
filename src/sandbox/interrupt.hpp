// Ctrl-C and termination requests while a container runs: the first SIGINT/SIGTERM is
// recorded and wakes the run loop through a pipe, so clean-up runs on the normal path.
#pragma once

namespace preflight::sandbox {

// Installs the handlers (idempotent). Until then signals keep their default action.
void install_interrupt_handlers();
// A file descriptor that becomes readable once a signal arrived; -1 before installation.
int interrupt_fd();
// The signal that arrived (SIGINT, SIGTERM), or 0.
int interrupt_signal();

}  // namespace preflight::sandbox
