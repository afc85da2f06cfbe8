#!/usr/bin/env bash
# A job cannot turn what Preflight reads back from it against Preflight (docs/security.md):
# the harness's events file, in a folder the job writes, replaced by a link to /dev/zero, by a
# FIFO or by a link to a file of the host that only root may read; and output without a
# newline, a quarter of a GiB of it. Each run ends well within its timeout, Preflight's memory
# stays small, and nothing of the host's file reaches the report.
# Usage: hostile_job.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
require_runtime

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
secret=$work/secret.jsonl  # a host file the job must never get into the report
printf '{"ev":"exception","t":1,"pid":1,"type":"HostSecret","message":"TOPSECRET","stage":"init","frames":[]}\n' >"$secret"
chmod 600 "$secret"
chmod 711 "$work"

job=$work/job
mkdir -p "$job"

run_case() {  # NAME PYTHON_BODY: runs the job, leaves its report in $work/NAME.json, RSS in $work/NAME.rss
  local name=$1
  printf 'import os, sys\nevents = os.environ["PREFLIGHT_EVENTS"]\n%s\nprint("done")\n' "$2" >"$job/main.py"
  printf 'name: hostile-%s\nimage: python\ncommand: python main.py\n' "$name" >"$job/job.yaml"
  /usr/bin/time -f %M -o "$work/$name.rss" timeout 120 \
    "$preflight" run -q --json "$work/$name.json" --timeout 60s "$job/job.yaml" >"$work/$name.out" 2>&1
  local status=$?
  check_equal "$name: exit status (the job itself succeeds)" 0 "$status"
  check_equal "$name: not timed out" "" "$(grep -o 'Timeout' "$work/$name.out")"
  local rss
  rss=$(tail -1 "$work/$name.rss")
  (( rss < 200000 )) || fail "$name: Preflight grew to $rss KiB"
  check_equal "$name: nothing of the host's file" "" "$(grep -o 'TOPSECRET\|HostSecret' "$work/$name.json" "$work/$name.out")"
  check_no_leftovers "hostile-$name"
}

run_case zero 'os.remove(events)
os.symlink("/dev/zero", events)'
run_case fifo 'os.remove(events)
os.mkfifo(events)'
run_case secret "os.remove(events)
os.symlink('$secret', events)"
# 256 MiB on stdout without a newline: lines are cut at 1 MiB and each byte is looked at once.
run_case flood 'chunk = "x" * (1 << 20)
for _ in range(256):
    sys.stdout.write(chunk)
sys.stdout.flush()'
finish
