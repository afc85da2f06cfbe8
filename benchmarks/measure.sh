#!/usr/bin/env bash
# What the harness's measured training step (docs/harness.md "Measuring a step") costs a dry run,
# at the jobs' own batch sizes: each bundled example as it is, and DCGAN at its defaults (batch
# 64, 64 feature maps), against the same job under the same harness with PREFLIGHT_MEASURE=0,
# which leaves the step unmeasured and changes nothing else. Writes its section of
# docs/benchmarks.md (from its heading up to its hand-written "### Reading these figures").
# The two sides of a pair run one after the other, RUNS times, so that a change in the machine's
# load falls on both. Usage: benchmarks/measure.sh [RUNS]   (as root, after scripts/setup pytorch)
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
cases=(mnist word_language_model dcgan imagenet vae dcgan-64)
for name in mnist word_language_model dcgan imagenet vae; do example_job "$name" "$work/$name-on.yaml"; done
example_job dcgan "$work/dcgan-64-on.yaml" "s/ --batchSize 16 --ngf 32 --ndf 32//"
for case in "${cases[@]}"; do with_variable "$work/$case-on.yaml" "$work/$case-off.yaml" PREFLIGHT_MEASURE 0; done
run_pairs "$runs" "${cases[@]}"

python3 - "$work" "$runs" "$version" "$load_before $load_after" "${cases[@]}" >"$work/section.md" <<'PY'
import glob, json, os, statistics, sys
work, runs, version, loadavg, cases = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(), sys.argv[5:]
times, cpu_times = {}, {}
for line in open(os.path.join(work, "times")):
    case, side, seconds, cpu_seconds = line.split()
    times.setdefault((case, side), []).append(float(seconds))
    cpu_times.setdefault((case, side), []).append(float(cpu_seconds))

def report(case, side):
    found = []
    for path in sorted(glob.glob(os.path.join(work, "{}-{}-*.json".format(case, side)))):
        try:
            found.append(json.load(open(path)))
        except ValueError:
            pass
    return found

sys.path.insert(0, "benchmarks")
from section import machine
print("## What the measured step costs (issue 10)\n")
print("Measured by `benchmarks/measure.sh` ({} runs of each side, the two sides of a pair one after "
      "the other), side by side in one run of Preflight at {} on: {}; 1-minute load average {} "
      "before the run and {} after it.\n".format(runs, version, machine(), loadavg[0], loadavg[1]))
print("`preflight run -q` of each example as it is (*measured*), against the same job under the same "
      "harness with `PREFLIGHT_MEASURE=0` (*not measured*): the same clamps, caps and virtual GPU, "
      "without the window of saved-tensor hooks and layer hooks. `dcgan-64` is examples/dcgan at the "
      "script's defaults (`--batchSize 64`, `--ngf 64 --ndf 64`). *Step* is the measured step's own "
      "time (report.json `estimate.step_seconds.here`). *CPU* is the user + system time of Preflight "
      "and everything it reaped (the container's processes, DataLoader workers included), which a "
      "busy machine stretches less than the wall time. Target: a ratio within 1.15.\n")
print("| job | batch | verdicts | not measured: no estimate | wall, measured | wall, not measured | wall ratio | CPU, measured / not | CPU ratio | step (measured) | GPU memory need |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for case in cases:
    on, off = times[(case, "on")], times[(case, "off")]
    reports_on, reports_off = report(case, "on"), report(case, "off")
    verdicts = "/".join(sorted(set(r.get("verdict", "?") for r in reports_on + reports_off)))
    estimates = [r.get("estimate") or {} for r in reports_on]
    batch = next((e.get("batch_size") for e in estimates if e.get("batch_size")), None)
    steps = [e["step_seconds"]["here"] for e in estimates if e.get("step_seconds")]
    needs = set((e.get("gpu_memory") or {}).get("needed_bytes") for e in estimates)
    need = ", ".join("{:.0f} MiB".format(n / 1048576.0) for n in sorted(n for n in needs if n)) or "no GPU"
    sd = lambda xs: statistics.stdev(xs) if len(xs) > 1 else 0.0
    unmeasured = "yes" if reports_off and not any(r.get("estimate") for r in reports_off) else "**no**"
    cpu_on, cpu_off = statistics.mean(cpu_times[(case, "on")]), statistics.mean(cpu_times[(case, "off")])
    print("| {} | {} | {} | {} | {:.1f} ± {:.1f} s | {:.1f} ± {:.1f} s | {:.2f}× | {:.1f} / {:.1f} s | {:.2f}× | {} | {} |".format(
        case, batch or "?", verdicts, unmeasured, statistics.mean(on), sd(on), statistics.mean(off), sd(off),
        statistics.mean(on) / statistics.mean(off), cpu_on, cpu_off, cpu_on / cpu_off,
        "{:.2f} s".format(statistics.mean(steps)) if steps else "none", need))
print()
PY

python3 benchmarks/section.py write "$work/section.md"
sed -n '/^## What the measured step costs/,/^### Reading these figures/p' docs/benchmarks.md
