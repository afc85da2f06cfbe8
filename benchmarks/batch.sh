#!/usr/bin/env bash
# `preflight batch` over every bundled example and every fixture job under tests/jobs, against
# the same jobs run one by one: each job's verdict in the batch must equal its single run's
# (both with the defaults, whatever the tests give a case), and the batch's wall time at -j 1,
# 2 and 4 is set against the sum of the single runs. The memory the machine has in use beyond
# what it had before is sampled every half second through each phase; its peak is reported.
# Writes its section of docs/benchmarks.md (up to its hand-written "### Reading these figures").
# Usage: benchmarks/batch.sh   (as root, after scripts/setup pytorch python)
# PREFLIGHT (a copy of the binary) and PREFLIGHT_DATA_DIR (a copy of emulator/, policies/,
# images/) keep edits in the work tree from changing what is measured mid-run.
set -euo pipefail
cd "$(dirname "$0")/.."
preflight=${PREFLIGHT:-$PWD/build/preflight}
command -v jq >/dev/null || apt-get install -y -qq jq >/dev/null
version=${PREFLIGHT_VERSION:-commit $(git rev-parse --short HEAD)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for dir in examples/*/ tests/jobs/*/; do echo "$PWD/${dir%/}/job.yaml"; done >"$work/jobs.txt"

# Runs COMMAND... while sampling MemTotal - MemAvailable; prints "WALL CPU PEAK_MIB" where PEAK_MIB
# is the largest rise over the value before it started.
measured() {
  local sampler status=0
  python3 - "$work/peak" <<'PY' &
import sys, time
def used():
    info = dict(line.split(":", 1) for line in open("/proc/meminfo"))
    kib = lambda key: int(info[key].split()[0])
    return (kib("MemTotal") - kib("MemAvailable")) / 1024
base, peak = used(), 0.0
while True:
    peak = max(peak, used() - base)
    open(sys.argv[1], "w").write("%.0f" % peak)
    time.sleep(0.5)
PY
  sampler=$!
  sleep 0.6
  times=$(python3 benchmarks/timed.py "$@") || status=$?
  kill "$sampler"
  wait "$sampler" 2>/dev/null || true
  echo "$times $(cat "$work/peak")"
  return "$status"
}

load_before=$(cut -d' ' -f1 /proc/loadavg)
# One by one: each job's own run, the sum of their wall times, and the peak over all of them.
python3 - "$work/singles.start" <<'PY'
import sys, time; open(sys.argv[1], "w").write(str(time.time()))
PY
: >"$work/singles"
single_peak=0
index=0
while read -r job; do
  index=$((index + 1))
  read -r wall cpu peak < <(measured "$preflight" run -q --json "$work/single-$index.json" "$job" || true)
  echo "$index $wall $cpu" >>"$work/singles"
  if ((peak > single_peak)); then single_peak=$peak; fi
done <"$work/jobs.txt"
echo "$single_peak" >"$work/single-peak"

for parallel in 1 2 4; do
  read -r wall cpu peak < <(measured "$preflight" batch "$work/jobs.txt" -j "$parallel" -q \
    --reports "$work/batch-$parallel" --json "$work/batch-$parallel.json" || true)
  echo "$parallel $wall $cpu $peak" >>"$work/batches"
done
load_after=$(cut -d' ' -f1 /proc/loadavg)

python3 - "$work" "$version" "$load_before $load_after" >"$work/section.md" <<'PY'
import json, os, sys
sys.path.insert(0, "benchmarks")
from section import machine
work, version, loadavg = sys.argv[1], sys.argv[2], sys.argv[3].split()
jobs = [line.strip() for line in open(os.path.join(work, "jobs.txt"))]
root = os.getcwd() + "/"
def verdict_of(path):
    try:
        return json.load(open(path)).get("verdict", "?")
    except (OSError, ValueError):
        return "no report"
singles = {}
for line in open(os.path.join(work, "singles")):
    index, wall, cpu = line.split()
    singles[int(index)] = (float(wall), float(cpu), verdict_of(os.path.join(work, "single-%s.json" % index)))
single_sum = sum(wall for wall, _, _ in singles.values())
single_peak = int(open(os.path.join(work, "single-peak")).read())
batches = []
mismatches = []
for line in open(os.path.join(work, "batches")):
    parallel, wall, cpu, peak = line.split()
    try:
        merged = json.load(open(os.path.join(work, "batch-%s.json" % parallel)))
    except (OSError, ValueError):
        merged = {"reports": [], "counts": {}}
    verdicts = [item["report"]["verdict"] for item in merged["reports"]]
    def first_error(i):
        report = merged["reports"][i]["report"] if i < len(merged["reports"]) else {}
        errors = [f for f in report.get("findings", []) if f.get("severity") == "error"]
        if errors:
            return "{}: {}".format(errors[0].get("category"), errors[0].get("message", "")[:160])
        return (report.get("error") or {}).get("message", "")[:160]
    differ = [(jobs[i], singles[i + 1][2], verdicts[i] if i < len(verdicts) else "none", first_error(i))
              for i in range(len(jobs)) if i >= len(verdicts) or verdicts[i] != singles[i + 1][2]]
    mismatches += [(parallel,) + d for d in differ]
    batches.append((int(parallel), float(wall), float(cpu), int(peak), merged.get("counts", {}), len(verdicts),
                    len(differ)))
counts = {}
for _, _, verdict in singles.values():
    counts[verdict] = counts.get(verdict, 0) + 1
print("## Many jobs at once (preflight batch, issue 15)\n")
print("Measured by `benchmarks/batch.sh` in one run of Preflight at {} on: {}; 1-minute load average {} "
      "before the run and {} after it.\n".format(version, machine(), loadavg[0], loadavg[1]))
print("Every bundled example and every fixture job under tests/jobs ({} jobs: {}), first each on its "
      "own (`preflight run -q --json`, one after the other), then all of them as one `preflight batch` "
      "at -j 1, 2 and 4, with the defaults throughout (no case's `args=`). *Peak memory* is the largest "
      "rise of the machine's memory in use (MemTotal − MemAvailable, sampled every 0.5 s) over its value "
      "at the start.\n".format(len(jobs), ", ".join("%d %s" % (n, v) for v, n in sorted(counts.items()))))
print("| runs | wall | against the sum of single runs | CPU | peak memory | jobs reported | verdicts unlike the single run's |")
print("|---|---|---|---|---|---|---|")
print("| one by one | {:.0f} s (sum) | 1.00 | {:.0f} s | {} MiB (the largest of one run) | {} | - |".format(
    single_sum, sum(cpu for _, cpu, _ in singles.values()), single_peak, len(singles)))
for parallel, wall, cpu, peak, merged_counts, reported, differ in batches:
    print("| batch -j {} | {:.0f} s | {:.2f} | {:.0f} s | {} MiB | {} | {} |".format(
        parallel, wall, wall / single_sum, cpu, peak, reported, differ))
print()
if mismatches:
    print("Verdicts that differ from the single run's:\n")
    for parallel, job, single, batch, why in mismatches:
        print("- -j {}: {}: {} alone, {} in the batch ({})".format(
            parallel, job.replace(root, ""), single, batch, why or "no error given"))
    print()
PY
python3 benchmarks/section.py write "$work/section.md"
sed -n '/^## Many jobs at once/,/^### Reading these figures/p' docs/benchmarks.md
