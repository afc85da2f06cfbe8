#!/usr/bin/env bash
# Ctrl-C during a dry run stops the job's container and removes it: afterwards runc lists
# nothing of the run, no mount or cgroup remains, and preflight exits 130. A run killed with
# SIGKILL leaves them to the next run, which reaps them first.
# Usage: interrupt_cleanup.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
require_runtime

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
job=$work/job
mkdir -p "$job"
# Starts the dry run of $job in the background (its pid in $pid) and waits for its container.
start_run() {  # JOB_NAME
  "$preflight" run "$job/job.yaml" --timeout 5m >"$work/out" 2>"$work/err" &
  pid=$!
  for _ in $(seq 1 300); do
    runtime_list | grep -q "^preflight-$1-" && return
    sleep 0.1
  done
  fail "the container never started: $(cat "$work/err")"
}

printf 'import time\nwhile True:\n    time.sleep(1)\n' >"$job/main.py"
printf 'name: interrupted\nimage: python\ncommand: python main.py\n' >"$job/job.yaml"
start_run interrupted
kill -INT "$pid"
wait "$pid"
check_equal "exit status" 130 "$?"
check_contains "message" "interrupted" "$(cat "$work/err")"
check_no_leftovers interrupted

# SIGKILL gives Preflight no chance to clean up: its container, overlay and cgroup stay until
# the next Preflight, which reaps them before anything else (docs/security.md).
printf 'name: killed\nimage: python\ncommand: python main.py\n' >"$job/job.yaml"
start_run killed
kill -KILL "$pid"
wait "$pid" 2>/dev/null
# As root, nothing is left to stop the container. Without root, the process in Preflight's user
# namespace gets SIGTERM when its parent dies (docs/rootless.md) and may clean up itself first.
if [[ $(id -u) == 0 ]]; then
  runtime_list | grep -q '^preflight-killed-' || fail "the killed run left no container to reap: the case proves nothing"
fi
printf 'print("next")\n' >"$job/main.py"
printf 'name: next\nimage: python\ncommand: python main.py\n' >"$job/job.yaml"
"$preflight" run -q "$job/job.yaml" >"$work/out" 2>"$work/err" || fail "the next run failed: $(cat "$work/err")"
check_no_leftovers killed
finish
