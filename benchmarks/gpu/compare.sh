#!/usr/bin/env bash
# What the dry run predicts for the GPU check kit's models, against what the kit measured on a
# real GPU (issue 34): for each model job the kit's RESULTS files hold, one
# `preflight estimate JOB --gpu NAME... --json FILE` here with every GPU it was measured on;
# then benchmarks/gpu/compare.py sets each prediction (the step, the GPU memory it needs) beside
# the measurement. Writes its section of docs/benchmarks.md (from its heading up to its
# hand-written "### Reading these figures") and prints it. No GPU is needed here.
# Usage: benchmarks/gpu/compare.sh [RESULTS.json...]   (as root, after scripts/setup pytorch;
# default: every file of benchmarks/gpu/results/)
# Environment: PREFLIGHT, a copy of the binary (so that a rebuild cannot land mid-run);
# COMPARE_KEEP, a folder that keeps each job's estimate, so that a run stopped part-way (or a new
# reading of the same runs) reuses every estimate newer than its job file, the binary and the GPU
# table.
set -euo pipefail
cd "$(dirname "$0")/../.."
preflight=${PREFLIGHT:-$PWD/build/preflight}
source benchmarks/kept.sh
set_version src emulator policies benchmarks/models
results=("$@")
((${#results[@]})) || results=(benchmarks/gpu/results/*.json)

set_work "${COMPARE_KEEP:-}"

# Each job as the kit ran it, on one GPU (the model jobs train on the CPU as they are, and a dry
# run reports the GPU memory a step needs only for a job with a GPU): a copy in WORK with its code
# folder's absolute path, which the user grants here (docs/cli.md "--allow").
export PREFLIGHT_ALLOW=$PWD/benchmarks/models
python3 benchmarks/gpu/compare.py jobs "${results[@]}" >"$work/jobs"
while IFS=$'\t' read -r -a fields; do
  name=$(basename "$(dirname "${fields[0]}")")
  folder=$PWD/$(dirname "${fields[0]}")
  job=$work/$name.yaml
  if grep -q '^code:' "${fields[0]}"; then
    sed -e "s|^code: \(.*\)|code: $folder/\1|" -e '$a resources: {gpus: 1}' "${fields[0]}"
  else
    sed -e "s|^name: .*|&\ncode: $folder|" -e '$a resources: {gpus: 1}' "${fields[0]}"
  fi >"$job.new"
  if cmp -s "$job.new" "$job"; then rm "$job.new"; else mv "$job.new" "$job"; fi  # kept: its time too
  args=()
  for gpu in "${fields[@]:1}"; do args+=(--gpu "$gpu"); done
  if [[ $work/$name.json -nt $job && $work/$name.json -nt $preflight && $work/$name.json -nt policies/gpus.yaml ]] &&
    grep -q '"compute_seconds"' "$work/$name.json"; then
    echo "compare.sh: $name: kept from $work/$name.json" >&2
    continue
  fi
  echo "compare.sh: preflight estimate $job ${args[*]}" >&2
  # The exit status is the dry run's verdict; what counts here is that its step was projected.
  "$preflight" estimate "$job" "${args[@]}" --no-bench -q --json "$work/$name.json" \
    >"$work/$name.out" 2>"$work/$name.err" || true
  if ! grep -q '"compute_seconds"' "$work/$name.json" 2>/dev/null; then
    echo "compare.sh: preflight estimate $job projected no step:" >&2
    tail -n 20 "$work/$name.out" "$work/$name.err" >&2
    exit 1
  fi
done <"$work/jobs"

python3 benchmarks/gpu/compare.py section "$work" "$version" "${results[@]}" >"$work/section.md"
cat "$work/section.md"
python3 benchmarks/section.py write "$work/section.md"
