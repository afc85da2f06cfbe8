#!/usr/bin/env bash
# Ends dry runs every way a run ends early, RUNS times each: by the dry run's own timeout, and
# by SIGINT, SIGTERM and SIGKILL sent to Preflight while the job's container runs. After each
# run it counts what is left of it: containers runc knows, mounts (in any mount namespace),
# cgroups, and the job's own processes. A SIGKILLed Preflight can clean up nothing itself (as
# root); what it leaves is counted, and counted again after the next Preflight, which reaps it
# (docs/security.md "Crash-safe lifecycle"). As an ordinary user (docs/rootless.md), SIGKILL
# goes to Preflight's process in its user namespace, the one that runs the container, as a
# crash or the OOM killer would end it; its parent outside stops what it left. Writes its
# section of docs/benchmarks.md (one as root, one without), or prints it where the user cannot.
# Usage: benchmarks/kill.sh [RUNS]   (default 25; after scripts/setup python; without root, with
# the user's own cache holding the python image, as scripts/test-rootless hands it over)
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/integration/lib.sh
runs=${1:-25}
preflight=${PREFLIGHT:-$PWD/build/preflight}
version=${PREFLIGHT_VERSION:-commit $(git rev-parse --short HEAD)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
job=$work/job
mkdir -p "$job"
printf 'import sys, time\nwhile True:\n    time.sleep(1)\n' >"$job/main.py"
printf 'print("next")\n' >"$job/next.py"

# What is left of the runs of job NAME: containers mounts cgroups processes.
leftovers() {
  local day='[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]'
  echo "$(runtime_list | grep -c "^preflight-$1-$day-" || true)" \
    "$(mounts_matching "preflight/runs/$1-$day-" | wc -l)" \
    "$(find /sys/fs/cgroup -maxdepth 3 -path "*/preflight/preflight-$1-$day-*" 2>/dev/null | wc -l)" \
    "$(pgrep -fc "main.py $1\$" || true)"
}

# Starts the dry run of job NAME in the background and waits for its container.
start_run() {  # NAME
  printf 'name: %s\nimage: python\ncommand: python main.py %s\n' "$1" "$1" >"$job/job.yaml"
  "$preflight" run -q "$job/job.yaml" --timeout 10m >"$work/out" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do
    runtime_list | grep -q "^preflight-$1-" && sleep 0.5 && return
    sleep 0.1
  done
  echo "the container of $1 never started: $(cat "$work/out")" >&2
  exit 1
}

load_before=$(cut -d' ' -f1 /proc/loadavg)
for way in timeout SIGINT SIGTERM SIGKILL; do
  for i in $(seq "$runs"); do
    name=kill-${way,,}-$i
    started=$(date +%s.%N)
    if [[ $way == timeout ]]; then
      printf 'name: %s\nimage: python\ncommand: python main.py %s\n' "$name" "$name" >"$job/job.yaml"
      status=0
      "$preflight" run -q "$job/job.yaml" --timeout 3s >"$work/out" 2>&1 || status=$?
    else
      start_run "$name"
      target=$pid
      # Without root: the process in the user namespace (docs/rootless.md), for SIGKILL.
      [[ $way == SIGKILL && $(id -u) != 0 ]] && target=$(pgrep -P "$pid" -x preflight)
      kill -"${way#SIG}" "$target"
      status=0
      wait "$pid" 2>/dev/null || status=$?
    fi
    ended=$(date +%s.%N)
    after=$(leftovers "$name")
    reaped=$after
    if [[ $way == SIGKILL ]]; then
      # The next Preflight reaps what the killed one left.
      printf 'name: %s-next\nimage: python\ncommand: python next.py\n' "$name" >"$job/job.yaml"
      "$preflight" run -q "$job/job.yaml" >/dev/null 2>&1 || true
      reaped=$(leftovers "$name")
    fi
    echo "$way $status $(awk "BEGIN {print $ended - $started}") $after $reaped" >>"$work/results"
  done
done
load_after=$(cut -d' ' -f1 /proc/loadavg)

python3 - "$work/results" "$runs" "$version" "$load_before $load_after" "$(id -u)" >"$work/section.md" <<'PY'
import collections, statistics, sys
sys.path.insert(0, "benchmarks")
from section import machine
results, runs, version, loadavg, uid = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(), sys.argv[5]
rows = collections.OrderedDict()
for line in open(results):
    way, status, seconds, *counts = line.split()
    row = rows.setdefault(way, {"status": collections.Counter(), "seconds": [], "after": [0] * 4, "reaped": [0] * 4})
    row["status"][status] += 1
    row["seconds"].append(float(seconds))
    for k in range(4):
        row["after"][k] += int(counts[k])
        row["reaped"][k] += int(counts[4 + k])
root = uid == "0"
print("## Ending runs early: timeout, SIGINT, SIGTERM, SIGKILL{} (issue {})\n".format(
    "" if root else ", without root", "11" if root else "30"))
print("Measured by `benchmarks/kill.sh {}` in one run of Preflight at {} on: {}, as {}; 1-minute load "
      "average {} before the run and {} after it.\n".format(
          runs, version, machine(), "root" if root else "an ordinary user", loadavg[0], loadavg[1]))
print("Each run is a job that sleeps forever. *timeout*: the dry run's own `--timeout 3s`; the "
      "signals are sent to Preflight half a second after the job's container appears{}. *Left* counts "
      "what remained of the run right after Preflight exited, as containers / mounts (in any mount "
      "namespace) / cgroups / job processes, summed over the runs; for SIGKILL, *after the next run* "
      "counts it again once the next Preflight has started (and reaped it).\n".format(
          "" if root else "; SIGKILL to Preflight's process in its user namespace, the one that runs the "
          "container, not to its parent outside"))
print("| ended by | runs | Preflight's exit statuses | seconds to exit, mean (max) | left | after the next run |")
print("|---|---|---|---|---|---|")
total_left = 0
for way, row in rows.items():
    statuses = ", ".join("{} ×{}".format(s, n) for s, n in sorted(row["status"].items()))
    left = " / ".join(map(str, row["after"]))
    reaped = " / ".join(map(str, row["reaped"])) if way == "SIGKILL" else "–"
    total_left += sum(row["reaped"])
    print("| {} | {} | {} | {:.2f} ({:.2f}) | {} | {} |".format(
        way, len(row["seconds"]), statuses, statistics.mean(row["seconds"]), max(row["seconds"]), left, reaped))
print("\n{} runs; {} container, mount, cgroup or job process left of any of them at the end.\n".format(
    sum(len(r["seconds"]) for r in rows.values()), total_left))
PY
if [[ -w docs/benchmarks.md ]]; then
  python3 benchmarks/section.py write "$work/section.md"
else
  echo "kill.sh: $(id -un) cannot write docs/benchmarks.md: python3 benchmarks/section.py write this section" >&2
fi
cat "$work/section.md"
