#!/usr/bin/env bash
# A disk budget across runs (docs/security.md "Crash-safe lifecycle"): on a small file system
# made here (a 400 MiB tmpfs as the cache's runs/ folder), four runs one after another of a
# job that writes until it is stopped. Each is stopped at the disk's floor (a quarter of it),
# each later one first prunes what the earlier stopped run wrote, so the free space does not
# ratchet down run after run; and with the disk filled by something that is not a run, the
# next run is refused before it starts, naming the folder and what to do. The free space
# after each run is printed (docs/benchmarks.md "Disk budget across runs").
# Usage: disk_budget.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
require_runtime
if [[ $(id -u) != 0 ]]; then
  echo "SKIP: mounting the test's small file system needs root" >&2
  exit 77
fi
base=${PREFLIGHT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/preflight}/images/python
[[ -f $base/index.json ]] || { echo "SKIP: the python image is not built (scripts/setup python)" >&2; exit 77; }

work=$(mktemp -d)
export PREFLIGHT_CACHE=$work/cache
runs=$PREFLIGHT_CACHE/runs
mkdir -p "$runs"
mount -t tmpfs -o size=400m,mode=755 tmpfs "$runs" || { echo "SKIP: cannot mount a tmpfs" >&2; exit 77; }
trap 'umount -l "$runs"; rm -rf "$work"' EXIT
mib() { echo $(($(df -B1 --output=avail "$runs" | tail -1) >> 20)); }
floor=100  # MiB: a quarter of the 400 MiB disk (DiskWatch::host_floor)

job=$work/job
mkdir -p "$job"
cat >"$job/job.yaml" <<'EOF'
name: fill
command: python fill.py ${{outputs.o}}
outputs:
  o: {}
EOF
# 3 MiB every 0.1 s, for ever: the disk watch, once a second, stops it near the floor.
cat >"$job/fill.py" <<'EOF'
import os, sys, time
chunk = b"x" * (3 << 20)
with open(os.path.join(sys.argv[1], "fill.bin"), "wb") as out:
    while True:
        try:
            out.write(chunk)
            out.flush()
        except OSError:
            pass
        time.sleep(0.1)
EOF

for run in 1 2 3 4; do
  "$preflight" run --image "oci:$base" --timeout 120s "$job/job.yaml" >"$work/run-$run.out" 2>&1
  status=$?
  free=$(mib)
  echo "run $run: exit $status, $free MiB free after it"
  check_equal "run $run: stopped by the disk watch (exit 3)" 3 "$status"
  check_contains "run $run: the message" "Preflight stopped it before it filled this machine's disk" \
    "$(cat "$work/run-$run.out")"
  ((free >= floor / 2)) || fail "run $run: $free MiB free after it, the floor is $floor MiB"
  if ((run > 1)); then
    check_contains "run $run: the earlier stopped run's outputs pruned" "of earlier runs from $runs" \
      "$(cat "$work/run-$run.out")"
  fi
  check_equal "run $run: stopped runs' outputs kept" 1 "$(find "$runs" -name fill.bin | wc -l)"
  check_no_leftovers fill
done

# Filled by something that is not a run, with no run left to prune: the next run is refused
# before it starts.
rm -rf "$runs"/fill-*
fallocate -l "$(($(mib) - floor / 2))M" "$runs/not-a-run" || fail "cannot fill $runs"
"$preflight" run --image "oci:$base" --timeout 120s "$job/job.yaml" >"$work/refused.out" 2>&1
check_equal "refused: exit status" 3 "$?"
check_contains "refused: names the folder" "$runs: its disk has" "$(cat "$work/refused.out")"
check_contains "refused: what to do" "preflight cache prune" "$(cat "$work/refused.out")"
check_equal "refused: no run folder made" 0 "$(find "$runs" -mindepth 1 -maxdepth 1 -name 'fill-*' | wc -l)"
echo "refused: exit 3 with $(mib) MiB free"
finish
