#!/usr/bin/env bash
# `preflight estimate` on a real job in the pytorch image (docs/estimate.md), and the
# projection `preflight run` puts in report.json:
# - tests/jobs/input_bound_slow_store, whose DataLoader is far slower than its step would
#   compute on the profile's GPU: every part of its measured step is rebuilt and benchmarked in
#   the image, the step is built again here, and on the P100 it is reported input-bound, in
#   `preflight estimate --json` and in the run's report.json alike;
# - a second estimate of the same job benchmarks nothing: every part comes from the cache;
# - `--gpu` takes the GPU table's aliases, one projection each, with the table's price; an
#   unknown GPU is bad input (exit 2) with a did-you-mean, before anything runs;
# - `--no-bench` projects without benchmarking: no step built here, the projections all the same;
# - another platform's job file, read as `preflight run` reads it (--map): a Slurm script whose
#   run is longer than its #SBATCH --time says so, in the projection and report.json; without
#   its --map, its run fails where it reads the cluster's folder, and the hint gives the --map.
# Usage: estimate.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
require_runtime
command -v jq >/dev/null || { echo "SKIP: jq is not installed" >&2; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
job=$root/tests/jobs/input_bound_slow_store/job.yaml

"$preflight" estimate "$job" --json "$work/first.json" -q >"$work/first.out" 2>&1
check_equal "estimate: exit status" 0 "$?"
check_equal "estimate: schema" "preflight.estimate/v1" "$(jq -r .schema "$work/first.json")"
check_equal "estimate: every part rebuilt" 0 "$(jq -r .here.unbenchmarked "$work/first.json")"
check_equal "estimate: parts benchmarked or cached" "$(jq -r .here.parts "$work/first.json")" \
  "$(jq -r '.here.benchmarked + .here.cached' "$work/first.json")"
check_equal "estimate: the step built here" true "$(jq -r '.here.constructed_seconds > 0' "$work/first.json")"
check_equal "estimate: the profile's GPU" "Tesla P100-PCIE-16GB" "$(jq -r '.gpus[0].gpu' "$work/first.json")"
check_equal "estimate: input-bound on it" input "$(jq -r '.gpus[0].bound' "$work/first.json")"
check_equal "estimate: the range in order" true \
  "$(jq -r '.gpus[0].step_seconds | .low <= .typical and .typical <= .high' "$work/first.json")"
check_equal "estimate: every part listed" "$(jq -r '.gpus[0].parts_total' "$work/first.json")" \
  "$(jq -r '.gpus[0].parts | length' "$work/first.json")"
check_contains "estimate: the table" "input-bound" "$(cat "$work/first.out")"

"$preflight" estimate "$job" --json "$work/second.json" -q >/dev/null 2>&1
check_equal "second estimate: exit status" 0 "$?"
check_equal "second estimate: nothing benchmarked again" 0 "$(jq -r .here.benchmarked "$work/second.json")"
check_equal "second estimate: all from the cache" "$(jq -r .here.parts "$work/second.json")" \
  "$(jq -r .here.cached "$work/second.json")"

"$preflight" estimate "$job" --gpu a100 --gpu V100 --no-bench --json "$work/gpus.json" -q >"$work/gpus.out" 2>&1
check_equal "--gpu: exit status" 0 "$?"
check_equal "--no-bench: no step built here" null "$(jq -r .here "$work/gpus.json")"
check_contains "--no-bench: said so" "parts were not benchmarked" "$(cat "$work/gpus.out")"
check_equal "--gpu: one projection each" "NVIDIA A100-SXM4-40GB Tesla V100-SXM2-16GB" \
  "$(jq -r '[.gpus[].gpu] | join(" ")' "$work/gpus.json")"
check_equal "--gpu: the V100's price" "AWS p3.2xlarge" "$(jq -r '.gpus[1].price' "$work/gpus.json")"
check_equal "--gpu: its cost" true "$(jq -r '.gpus[1].cost_usd > 0' "$work/gpus.json")"
# Neither card's framework is measured in the table: both count diagnosis's 420 MiB, and both
# needs are the run's own need on its P100.
check_equal "--gpu: the step's memory need on each" true \
  "$(jq -r '[.gpus[].memory_needed_bytes] | (.[0] > 440401920 and .[0] == .[1])' "$work/gpus.json")"
check_equal "--gpu: the same as the run's" "$(jq -r '.estimate.gpu_memory.needed_bytes' "$work/gpus.json")" \
  "$(jq -r '.gpus[0].memory_needed_bytes' "$work/gpus.json")"

message=$("$preflight" estimate "$job" --gpu A100-SXM4-40G 2>&1 >/dev/null)
check_equal "unknown --gpu: exit status" 2 "$?"
check_contains "unknown --gpu: did you mean" "did you mean" "$message"

"$preflight" run "$job" --json "$work/report.json" -q >/dev/null 2>&1
check_equal "run: exit status" 0 "$?"
check_equal "run: report.json's projection" input "$(jq -r '.estimate.platform.bound' "$work/report.json")"
check_equal "run: its iteration waits for the data" true \
  "$(jq -r '.estimate.step_seconds.iteration >= .estimate.step_seconds.data' "$work/report.json")"
# A Slurm script: --map reaches the dry run, and the time limit the projection.
slurm_case=$work/slurm
cp -r "$root/tests/jobs/format_slurm_time_limit" "$slurm_case"
(cd "$slurm_case" && "$preflight" estimate pretrain.sbatch --image pytorch --map /datasets/wiki=./data --no-bench \
  --json "$work/slurm.json" -q >"$work/slurm.out" 2>&1)
check_equal "a Slurm script: exit status" 0 "$?"
check_equal "a Slurm script: its platform" slurm "$(jq -r .platform "$work/slurm.json")"
check_equal "a Slurm script: its time limit, in hours" 0.5 "$(jq -r .estimate.time_limit_hours "$work/slurm.json")"
check_contains "a Slurm script: the run past its limit" "longer than the job's time limit of 30 min" \
  "$(cat "$work/slurm.out")"
# Without it, the cluster's folder is missing, and the hint gives the --map in the script's terms.
(cd "$slurm_case" && "$preflight" run pretrain.sbatch --image pytorch -q --json "$work/unmapped.json" >/dev/null 2>&1)
check_equal "a Slurm script without its --map: exit status" 1 "$?"
check_equal "a Slurm script without its --map: the failure" "Path Not Found data pretrain.py" \
  "$(jq -r '.findings[0] | "\(.category) \(.stage) \(.location.file)"' "$work/unmapped.json")"
check_contains "a Slurm script without its --map: the map to add" "--map /datasets/wiki=./LOCAL" \
  "$(jq -r '.findings[0].hint' "$work/unmapped.json")"

finish
