// Signals every process of a container by its pid namespace. runc's `kill --all` finds them
// through the container's cgroup, which a rootless run does not have (docs/rootless.md).
#pragma once

#include <sys/types.h>

namespace preflight::sandbox {

// Sends `signal` to each process in the pid namespace of `member` (the container's first
// process); returns how many were signalled.
int signal_pid_namespace(pid_t member, int signal);

}  // namespace preflight::sandbox
