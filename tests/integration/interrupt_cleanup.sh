#!/usr/bin/env bash
# Ctrl-C during a dry run stops the job's container and removes it: afterwards runc lists
# nothing of the run, no mount or cgroup remains, and preflight exits 130. A run killed with
# SIGKILL leaves them to the next run, which reaps them first, and to `cache prune`, which
# reaps them before it removes anything. Without root (docs/rootless.md), the same when the
# process in Preflight's user namespace is killed, alone (its parent outside stops what it
# left) or with that parent (the next Preflight stops it); and a prune leaves a live run's
# folder and image alone.
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

# The job's processes still running: the job of run NAME runs `python main.py NAME TAG`, TAG
# this test's own, so that a job an earlier failure left running fails no later test.
tag=$$
check_no_job_left() {  # NAME
  check_equal "processes of $1's job left" 0 "$(pgrep -fc "main.py $1 $tag\$" || true)"
}
# Starts a run of job NAME whose job sleeps forever.
start_sleeper() {  # NAME
  printf 'import time\nwhile True:\n    time.sleep(1)\n' >"$job/main.py"
  printf 'name: %s\nimage: python\ncommand: python main.py %s %s\n' "$1" "$1" "$tag" >"$job/job.yaml"
  start_run "$1"
}
trap 'pkill -KILL -f "main.py [a-z]+ $tag\$"; rm -rf "$work"' EXIT
# Runs a job that ends at once: the next Preflight after one that was killed.
run_next() {
  printf 'print("next")\n' >"$job/next.py"
  printf 'name: next\nimage: python\ncommand: python next.py\n' >"$job/job.yaml"
  "$preflight" run -q "$job/job.yaml" >"$work/out" 2>"$work/err" || fail "the next run failed: $(cat "$work/err")"
}
# SIGKILL of all of Preflight, which can then clean up nothing: as root its one process;
# without root, the process outside stopped first (so that it does not see its child die),
# then its child in the user namespace, then itself.
kill_all_of_preflight() {
  local inner
  inner=$(pgrep -P "$pid" -x preflight || true)
  kill -STOP "$pid"
  [[ -z $inner ]] || kill -KILL "$inner"
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
}

# SIGKILL gives Preflight no chance to clean up: its container, overlay and cgroup stay until
# the next Preflight, which reaps them before anything else (docs/security.md).
start_sleeper killed
kill_all_of_preflight
runtime_list | grep -q '^preflight-killed-' || fail "the killed run left no container to reap: the case proves nothing"
run_next
check_no_leftovers killed
check_no_job_left killed

# `cache prune` after a SIGKILL, in a cache of its own: it reaps the container before it
# removes the run's folder and image, and nothing of the run is left. Meanwhile another run goes
# on: its folder and image stay.
shared=${PREFLIGHT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/preflight}
export PREFLIGHT_CACHE=$work/preflight  # ends in preflight/, as check_no_leftovers looks for preflight/runs/
mkdir -p "$PREFLIGHT_CACHE/images"
cp -al "$shared/images/python" "$PREFLIGHT_CACHE/images/" 2>/dev/null || cp -a "$shared/images/python" "$PREFLIGHT_CACHE/images/"
trap '"$preflight" cache prune >/dev/null 2>&1; pkill -KILL -f "main.py [a-z]+ $tag\$"; rm -rf "$work"' EXIT
start_sleeper alive
alive_pid=$pid
start_sleeper pruned
kill_all_of_preflight
"$preflight" cache prune >"$work/prune" 2>&1 || fail "cache prune failed: $(cat "$work/prune")"
check_no_leftovers pruned
check_no_job_left pruned
check_equal "processes of the live run's job" 1 "$(pgrep -fc "main.py alive $tag\$" || true)"
[[ -n $(find "$PREFLIGHT_CACHE/runs" -maxdepth 1 -name 'alive-*' -print -quit) ]] ||
  fail "cache prune removed the live run's folder"
check_equal "images in the cache after the prune" 1 "$(find "$PREFLIGHT_CACHE/rootfs" -maxdepth 1 -name 'sha256-*' | wc -l)"
kill -INT "$alive_pid"
wait "$alive_pid"
check_equal "the live run's exit status after the prune" 130 "$?"
check_no_leftovers alive

# Without root, SIGKILL of the process in the namespace alone (the one that runs the
# container): its parent outside sees it die and stops what it left.
if [[ $(id -u) != 0 ]]; then
  start_sleeper inner
  inner=$(pgrep -P "$pid" -x preflight)
  [[ -n $inner ]] || fail "no process of Preflight in its user namespace"
  kill -KILL "$inner"
  wait "$pid"
  check_equal "exit status when the namespace's process is killed" 137 "$?"
  check_no_leftovers inner
  check_no_job_left inner
fi
finish
