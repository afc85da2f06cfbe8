#!/usr/bin/env bash
# The GPU projection of `preflight estimate` checked against published training throughputs: for
# each job of benchmarks/published/ (ResNet-50 and BERT-Large, in FP32 and under FP16 autocast),
# one `preflight estimate JOB --gpu NAME... --json FILE` with every GPU its cases in
# benchmarks/published/throughputs.json name; then benchmarks/published.py compares the projected
# throughput (the job's batch ÷ the projected step) with the published one. Writes its section of
# docs/benchmarks.md (from its heading up to its hand-written "### Reading these figures") and
# prints it. No GPU is needed: the projection is the dry run's measured step, part by part,
# through the GPU table (policies/gpus.yaml).
# Usage: benchmarks/published.sh   (as root, after scripts/setup pytorch; about 45 minutes on two
# cores, most of it BERT's steps, and 16 GB of memory for ResNet-50's batch of 112)
# Environment: PREFLIGHT, a copy of the binary (so that a rebuild cannot land mid-run);
# PUBLISHED_KEEP, a folder that keeps each job's estimate, so that a run stopped part-way (or a
# new reading of the same runs) reuses every estimate newer than its job file, the binary and the
# GPU table, and projects only the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
preflight=${PREFLIGHT:-$PWD/build/preflight}
source benchmarks/kept.sh
set_version src emulator policies benchmarks/published

set_work "${PUBLISHED_KEEP:-}"

# One line per job: the job file, then the GPUs its cases name, tab-separated.
python3 benchmarks/published.py jobs >"$work/jobs"
kept=0 total=0
while IFS=$'\t' read -r -a fields; do
  job=${fields[0]}
  total=$((total + 1))
  args=()
  for gpu in "${fields[@]:1}"; do args+=(--gpu "$gpu"); done
  if [[ $work/$job.json -nt benchmarks/published/$job && $work/$job.json -nt $preflight &&
        $work/$job.json -nt policies/gpus.yaml ]] && grep -q '"compute_seconds"' "$work/$job.json"; then
    echo "published.sh: $job: kept from $work/$job.json" >&2
    kept=$((kept + 1))
    continue
  fi
  echo "published.sh: preflight estimate $job ${args[*]}" >&2
  start=$EPOCHREALTIME
  # The exit status is the dry run's verdict; what counts here is that its step was projected.
  "$preflight" estimate "benchmarks/published/$job" "${args[@]}" --no-bench --json "$work/$job.json" \
    >"$work/$job.out" 2>"$work/$job.err" || true
  if ! grep -q '"compute_seconds"' "$work/$job.json" 2>/dev/null; then
    echo "published.sh: preflight estimate $job projected no step:" >&2
    tail -n 20 "$work/$job.out" "$work/$job.err" >&2
    exit 1
  fi
  echo "published.sh: $job: $(awk -v s="$start" -v e="$EPOCHREALTIME" 'BEGIN {printf "%.0f s", e - s}')" >&2
done <"$work/jobs"

if ((kept)); then
  version+=" ($kept of $total jobs' estimates kept from an earlier run, each newer than the binary, its job file and the GPU table)"
fi
python3 benchmarks/published.py section "$work" "$version" >"$work/section.md"
cat "$work/section.md"
python3 benchmarks/section.py write "$work/section.md"
