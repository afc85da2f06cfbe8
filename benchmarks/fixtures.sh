#!/usr/bin/env bash
# The wall time of every bundled example's and every fixture job's dry run, the way the tests
# run them (tests/jobs/CASE/expect's `command=` and `args=`), one after the other, and writes its
# section of docs/benchmarks.md (from its heading up to its hand-written "### Reading these
# figures"): one line per job, slowest first, against the one-minute target.
# Usage: benchmarks/fixtures.sh [RUNS]   (as root, after scripts/setup pytorch)
# PREFLIGHT (a copy of the binary) and PREFLIGHT_DATA_DIR (a copy of emulator/, policies/,
# images/) keep edits in the work tree from changing what is measured mid-run.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1}
preflight=${PREFLIGHT:-$PWD/build/preflight}
command -v jq >/dev/null || apt-get install -y -qq jq >/dev/null
version=${PREFLIGHT_VERSION:-commit $(git rev-parse --short HEAD)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

load_before=$(cut -d' ' -f1 /proc/loadavg)
for run in $(seq "$runs"); do
  for dir in examples/*/ tests/jobs/*/; do
    dir=${dir%/}
    command=run args=()
    if [[ -f $dir/expect ]]; then
      command=$(sed -n 's/^command=//p' "$dir/expect")
      read -r -a args <<<"$(sed -n 's/^args=//p' "$dir/expect")"
    fi
    command=${command:-run} tag=${dir//\//-}
    [[ $command == run ]] && args+=(-q)
    echo "$dir $command $(python3 benchmarks/timed.py "$preflight" "$command" \
      --json "$work/$tag-$run.json" "${args[@]}" "$dir/job.yaml" || true)" >>"$work/times"
  done
done
load_after=$(cut -d' ' -f1 /proc/loadavg)

python3 - "$work" "$runs" "$version" "$load_before $load_after" >"$work/section.md" <<'PY'
import glob, json, os, statistics, sys
sys.path.insert(0, "benchmarks")
from section import machine
work, runs, version, loadavg = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split()
jobs = {}
for line in open(os.path.join(work, "times")):
    job, command, wall, cpu = line.split()
    entry = jobs.setdefault(job, {"command": command, "wall": [], "cpu": []})
    entry["wall"].append(float(wall))
    entry["cpu"].append(float(cpu))
for job, entry in jobs.items():
    verdicts = set()
    for path in glob.glob(os.path.join(work, job.replace("/", "-") + "-*.json")):
        try:
            verdicts.add(json.load(open(path)).get("verdict", "?"))
        except ValueError:
            verdicts.add("no report")
    entry["verdict"] = "/".join(sorted(verdicts)) or "no report"
order = sorted(jobs, key=lambda job: -max(jobs[job]["wall"]))
walls = [max(jobs[job]["wall"]) for job in order]
print("## Every dry run's wall time (issue 10)\n")
print("Measured by `benchmarks/fixtures.sh` ({} run{} of each, one job at a time) in one run of Preflight "
      "at {} on: {}; 1-minute load average {} before the run and {} after it.\n".format(
          runs, "" if runs == 1 else "s", version, machine(), loadavg[0], loadavg[1]))
print("`preflight run -q` (or `check`, with the arguments the tests give) of every example and every "
      "fixture job under tests/jobs, the whole pipeline with a warm image cache. *Wall* is the slowest "
      "run's; *CPU* is the mean user + system time of Preflight and everything it reaped. Target: under "
      "a minute each.\n")
print("{} jobs: {} under a minute, the slowest {:.1f} s ({}), the median {:.1f} s, all of them {:.0f} s "
      "one after the other.\n".format(len(order), sum(w < 60 for w in walls), walls[0], order[0],
                                      statistics.median(walls), sum(statistics.mean(jobs[j]["wall"]) for j in order)))
print("| job | command | verdict | wall | CPU | under a minute |")
print("|---|---|---|---|---|---|")
for job, wall in zip(order, walls):
    entry = jobs[job]
    print("| {} | {} | {} | {:.1f} s | {:.1f} s | {} |".format(
        job, entry["command"], entry["verdict"], wall, statistics.mean(entry["cpu"]),
        "yes" if wall < 60 else "**no**"))
print()
PY
python3 benchmarks/section.py write "$work/section.md"
sed -n '/^## Every dry run.s wall time/,/^### Reading these figures/p' docs/benchmarks.md
