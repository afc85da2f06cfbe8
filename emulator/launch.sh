#!/bin/sh
# Preflight's launcher inside the job's container: launch.sh SETUP COMMAND LAUNCHER...
# Runs SETUP (when not empty), then COMMAND, each through the platform's LAUNCHER (for
# example /bin/bash -c), as the platform would. Where setup ends is marked on both streams,
# so that Preflight can tell which output belongs to which step.
setup=$1
command=$2
shift 2
if [ -n "$setup" ]; then
  PREFLIGHT_PHASE=setup "$@" "$setup"
  status=$?
  printf '\036preflight:setup-exit %d\n' "$status"
  printf '\036preflight:setup-exit %d\n' "$status" >&2
  [ "$status" -eq 0 ] || exit "$status"
fi
PREFLIGHT_PHASE='command' exec "$@" "$command"
