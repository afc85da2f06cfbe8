#!/usr/bin/env bash
# What watching the lines of static predictions (docs/harness.md "Watched lines") costs a dry
# run at its worst: each bundled example with PREFLIGHT_WATCH naming a line of its entry script
# that never runs, so the watch stays on from start to end (on the image's Python 3.11 a global
# trace function, which keeps all Python code on the interpreter's slower tracing path),
# against the same job as it is. Writes its section of docs/benchmarks.md (from its heading up
# to its hand-written "### Reading these figures"). The two sides of a pair run one after the
# other, RUNS times. Usage: benchmarks/watch.sh [RUNS]   (as root, after scripts/setup pytorch)
# PREFLIGHT (a copy of the binary) and PREFLIGHT_DATA_DIR (a copy of emulator/, policies/,
# images/) keep edits in the work tree from changing what is measured mid-run.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
preflight=${PREFLIGHT:-$PWD/build/preflight}
command -v jq >/dev/null || apt-get install -y -qq jq >/dev/null
version=${PREFLIGHT_VERSION:-commit $(git rev-parse --short HEAD)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

source benchmarks/pairs.sh
jobs=(mnist word_language_model dcgan imagenet vae)
for name in "${jobs[@]}"; do
  script=$(grep -o 'python [A-Za-z_]*\.py' "examples/$name/job.yaml" | head -1 | cut -d' ' -f2)
  example_job "$name" "$work/$name-off.yaml"
  # A line past the script's end: no function ever reaches it, so it is never seen.
  with_variable "$work/$name-off.yaml" "$work/$name-on.yaml" PREFLIGHT_WATCH \
    "$(($(wc -l <"examples/$name/$script") + 100)) $script"
done
run_pairs "$runs" "${jobs[@]}"

python3 - "$work" "$runs" "$version" "$load_before $load_after" "${jobs[@]}" >"$work/section.md" <<'PY'
import glob, json, os, statistics, sys
sys.path.insert(0, "benchmarks")
from section import machine
work, runs, version, loadavg, jobs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(), sys.argv[5:]
times = {}
for line in open(os.path.join(work, "times")):
    name, side, wall, cpu = line.split()
    times.setdefault((name, side), []).append((float(wall), float(cpu)))
print("## What watching a line costs (issue 10)\n")
print("Measured by `benchmarks/watch.sh` ({} runs of each side, the two sides of a pair one after the "
      "other) in one run of Preflight at {} on: {}; 1-minute load average {} before the run and {} after "
      "it.\n".format(runs, version, machine(), loadavg[0], loadavg[1]))
print("`preflight run -q` of each example with `PREFLIGHT_WATCH` naming a line of its entry script that "
      "never runs (*watched*: the watch is on from the first line to the last, its worst case) against "
      "the same job as it is (*not watched*: a clean job has no prediction to watch). *CPU* is the user + "
      "system time of Preflight and everything it reaped.\n")
print("| job | verdicts | wall, watched | wall, not watched | wall ratio | CPU, watched / not | CPU ratio |")
print("|---|---|---|---|---|---|---|")
for name in jobs:
    on, off = times[(name, "on")], times[(name, "off")]
    verdicts = set()
    for path in glob.glob(os.path.join(work, name + "-*.json")):
        try:
            verdicts.add(json.load(open(path)).get("verdict", "?"))
        except ValueError:
            verdicts.add("no report")
    mean = lambda pairs, i: statistics.mean(p[i] for p in pairs)
    sd = lambda pairs: statistics.stdev(p[0] for p in pairs) if len(pairs) > 1 else 0.0
    print("| {} | {} | {:.1f} ± {:.1f} s | {:.1f} ± {:.1f} s | {:.2f}× | {:.1f} / {:.1f} s | {:.2f}× |".format(
        name, "/".join(sorted(verdicts)), mean(on, 0), sd(on), mean(off, 0), sd(off), mean(on, 0) / mean(off, 0),
        mean(on, 1), mean(off, 1), mean(on, 1) / mean(off, 1)))
print()
PY
python3 benchmarks/section.py write "$work/section.md"
sed -n '/^## What watching a line costs/,/^### Reading these figures/p' docs/benchmarks.md
