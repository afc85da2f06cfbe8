#!/usr/bin/env bash
# What the full-size check of docs/harness.md "Sampling the batch" costs a job whose step is
# cheap enough to run as it is (every bundled example): each example as it is (*checked*: each
# DataLoader loop's first batch run again at full size on shape-only tensors, in a forked
# child), against the same job with `dryrun.batch: 0` (*not checked*), the sides one after
# the other, RUNS times. Writes its section of docs/benchmarks.md (from its heading up to its
# hand-written "### Reading these figures").
# PREFLIGHT_BASELINE (another build of preflight, such as the commit before issue 33's first,
# with its own emulator/ and policies/) adds a third side, the job as it is with that build,
# named by PREFLIGHT_BASELINE_NAME.
# Usage: benchmarks/sampling.sh [RUNS]   (as root, after scripts/setup pytorch)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
preflight=${PREFLIGHT:-$PWD/build/preflight}
version=${PREFLIGHT_VERSION:-commit $(git rev-parse --short HEAD)}
baseline=${PREFLIGHT_BASELINE:-}
baseline_name=${PREFLIGHT_BASELINE_NAME:-baseline}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

source benchmarks/pairs.sh
cases=(mnist word_language_model dcgan imagenet vae)
for name in "${cases[@]}"; do
  example_job "$name" "$work/$name-on.yaml"
  if grep -q '^dryrun:' "$work/$name-on.yaml"; then
    sed 's/^dryrun:$/&\n  batch: 0/' "$work/$name-on.yaml" >"$work/$name-off.yaml"
  else
    { cat "$work/$name-on.yaml"; echo "dryrun: {batch: 0}"; } >"$work/$name-off.yaml"
  fi
done
run_pairs "$runs" "${cases[@]}"

python3 - "$work" "$runs" "$version" "$load_before $load_after" "${baseline:+$baseline_name}" "${cases[@]}" \
  >"$work/section.md" <<'PY'
import glob, json, os, statistics, sys
work, runs, version, loadavg, before, cases = (
    sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(), sys.argv[5], sys.argv[6:])
times = {}
for line in open(os.path.join(work, "times")):
    case, side, seconds, cpu_seconds = line.split()
    times.setdefault((case, side), []).append((float(seconds), float(cpu_seconds)))
sys.path.insert(0, "benchmarks")
from section import machine
out = ["## What the full-size check costs a small job (issue 33)", ""]
out.append("Measured by `benchmarks/sampling.sh` (%s runs of each side, the sides one after the other, every other run in the reverse order) "
           "at %s on: %s; 1-minute load average %s before the run and %s after it." % (
               runs, version, machine(), loadavg[0], loadavg[1]))
out += ["", "`preflight run -q` of each example as it is (*checked*) and with `dryrun.batch: 0` (*not "
        "checked*: no loop's first batch is run again at full size). No example's step is costly "
        "enough to be sampled, so both sides train the same batches. *CPU*: the user and system time "
        "of Preflight and of everything it reaped." + (
            " *Before*: the job as it is, run by the build of %s, each run beside the two others." % before
            if before else ""), "",
        "| job | verdicts | wall, checked | wall, not checked | wall ratio | CPU, checked / not | CPU ratio |"
        + (" wall, before | wall ratio to before | CPU, before | CPU ratio to before |" if before else ""),
        "|---|---|---|---|---|---|---|" + ("---|---|---|---|" if before else "")]
ratios, before_ratios = [], []
for case in cases:
    verdicts = set()
    for path in glob.glob(os.path.join(work, case + "-*-*.json")):
        try:
            verdicts.add(json.load(open(path)).get("verdict", "?"))
        except ValueError:
            verdicts.add("?")
    on, off = times[(case, "on")], times[(case, "off")]
    wall_on, wall_off = statistics.median(s for s, _ in on), statistics.median(s for s, _ in off)
    cpu_on, cpu_off = statistics.median(c for _, c in on), statistics.median(c for _, c in off)
    ratios.append(wall_on / wall_off)
    row = "| %s | %s | %.2f s | %.2f s | %.2f× | %.1f / %.1f s | %.2f× |" % (
        case, "/".join(sorted(verdicts)), wall_on, wall_off, wall_on / wall_off, cpu_on, cpu_off, cpu_on / cpu_off)
    if before:
        old = times[(case, "before")]
        wall_old, cpu_old = statistics.median(s for s, _ in old), statistics.median(c for _, c in old)
        before_ratios.append(wall_on / wall_old)
        row += " %.2f s | %.2f× | %.1f s | %.2f× |" % (wall_old, wall_on / wall_old, cpu_old, cpu_on / cpu_old)
    out.append(row)
out += ["", "Medians. Geometric mean of the wall ratios: %.2f%s." % (
    statistics.geometric_mean(ratios),
    ", to before: %.2f" % statistics.geometric_mean(before_ratios) if before else "")]
print("\n".join(out) + "\n")
PY
python3 benchmarks/section.py write "$work/section.md"
cat "$work/section.md"
