#!/usr/bin/env bash
# What the dry run's trace (docs/harness.md "Trace") costs and weighs: mnist, dcgan and
# word_language_model as they are, against the same job with PREFLIGHT_TRACE=0, which leaves
# the harness's trace off and changes nothing else; and the size of each run's trace.json.gz.
# Writes its section of docs/benchmarks.md (from its heading up to its hand-written "### Reading
# these figures"). The two sides of a pair run one after the other, RUNS times, so that a change
# in the machine's load falls on both.
# Usage: benchmarks/trace.sh [RUNS]   (as root, after scripts/setup pytorch)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
preflight=${PREFLIGHT:-$PWD/build/preflight}
version=${PREFLIGHT_VERSION:-commit $(git rev-parse --short HEAD)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

source benchmarks/pairs.sh
cases=(mnist dcgan word_language_model)
for case in "${cases[@]}"; do
  example_job "$case" "$work/$case-on.yaml"
  with_variable "$work/$case-on.yaml" "$work/$case-off.yaml" PREFLIGHT_TRACE 0
done
run_pairs "$runs" "${cases[@]}"

python3 - "$work" "$runs" "$version" "$load_before $load_after" "${cases[@]}" >"$work/section.md" <<'PY'
import collections, gzip, json, os, statistics, sys
work, runs, version, loadavg, cases = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(), sys.argv[5:]
times = collections.defaultdict(list)
for line in open(os.path.join(work, "times")):
    case, side, wall, cpu = line.split()
    times[(case, side)].append((float(wall), float(cpu)))

def trace(case, side, run):
    path = os.path.join(work, "{}-{}-{}.json.gz".format(case, side, run))
    try:
        data = open(path, "rb").read()
        return len(data), json.loads(gzip.decompress(data))
    except (OSError, ValueError):
        return 0, {"traceEvents": []}

def verdict(case, side, run):
    try:
        return json.load(open(os.path.join(work, "{}-{}-{}.json".format(case, side, run)))).get("verdict", "?")
    except (OSError, ValueError):
        return "?"

sys.path.insert(0, "benchmarks")
from section import machine
print("## The trace's size and cost (issue 13)\n")
print("Measured by `benchmarks/trace.sh` ({} runs of each side, the two sides of a pair one after the "
      "other) in one run of Preflight at {} on: {}; 1-minute load average {} before the run and {} "
      "after it.\n".format(runs, version, machine(), loadavg[0], loadavg[1]))
print("`preflight run -q --trace` of each example as it is (*traced*) against the same job with "
      "`PREFLIGHT_TRACE=0` (*not traced*: the harness records no trace; Preflight still writes the "
      "job's stages). *Size* is trace.json.gz as written, *events* the spans of the job's processes "
      "by category in the traced runs' last file. *CPU* is the user + system time of Preflight and "
      "everything it reaped. Target: tracing under 5% of the wall time, a trace under 5 MB.\n")
print("| job | verdicts | wall, traced | wall, not traced | wall ratio | CPU, traced / not | CPU ratio | size | events |")
print("|---|---|---|---|---|---|---|---|---|")
sd = lambda xs: statistics.stdev(xs) if len(xs) > 1 else 0.0
for case in cases:
    on, off = times[(case, "on")], times[(case, "off")]
    verdicts = "/".join(sorted(set(verdict(case, side, run) for side in ("on", "off") for run in range(1, int(runs) + 1))))
    wall_on, wall_off = [w for w, _ in on], [w for w, _ in off]
    cpu_on, cpu_off = statistics.mean(c for _, c in on), statistics.mean(c for _, c in off)
    size, last = trace(case, "on", runs)
    counts = collections.Counter(e.get("cat") for e in last["traceEvents"] if e.get("ph") == "X" and e.get("cat") not in ("stage", "failure"))
    events = ", ".join("{} {}".format(n, cat) for cat, n in counts.most_common())
    print("| {} | {} | {:.1f} ± {:.1f} s | {:.1f} ± {:.1f} s | {:.3f}× | {:.1f} / {:.1f} s | {:.3f}× | {:.1f} KB | {} |".format(
        case, verdicts, statistics.mean(wall_on), sd(wall_on), statistics.mean(wall_off), sd(wall_off),
        statistics.mean(wall_on) / statistics.mean(wall_off), cpu_on, cpu_off, cpu_on / cpu_off,
        size / 1000.0, events or "none"))
print()
PY

python3 benchmarks/section.py write "$work/section.md"
sed -n '/^## The trace.s size and cost/,/^### Reading these figures/p' docs/benchmarks.md
