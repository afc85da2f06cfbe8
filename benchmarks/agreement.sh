#!/usr/bin/env bash
# Shape-only steps against real ones (issue 33): each job of benchmarks/scale/ that fits this
# host, at a batch whose real step runs here, three ways: its real step at the job's own batch
# (dryrun.batch 0), the sampled run whose step figures come from the full-size check on
# shape-only tensors (PREFLIGHT_SAMPLE_FLOPS 0 samples any step), and the whole model on
# shape-only tensors (PREFLIGHT_HOST_PARAMETERS 1). Prints a Markdown table of the GPU memory
# each says the step needs (report.json estimate.gpu_memory.needed_bytes) and the measured
# step's FLOPs (the trace's "measured step"), each against the real step's.
# Usage: benchmarks/agreement.sh   (as root, after scripts/setup pytorch)
set -euo pipefail
cd "$(dirname "$0")/.."
preflight=${PREFLIGHT:-$PWD/build/preflight}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PREFLIGHT_ALLOW=$work

# job, the arguments that give a step that runs here
cases=(
  "resnet50|--batch-size 16 --workers 2"
  "gpt2_small|--batch-size 4 --accumulation 1"
)

measure() {  # JOB ARGS WAY -> "needed_bytes flops seconds"
  local job=$1 args=$2 way=$3 dir=$work/$1-$3
  rm -rf "$dir"
  cp -r "benchmarks/scale/$job" "$dir"
  local command
  command=$(sed -n 's/^command: //p' "benchmarks/scale/$job/job.yaml")
  {
    grep -v '^command:' "benchmarks/scale/$job/job.yaml"
    echo "command: $command $args"
    case $way in
    real) echo "dryrun: {batch: 0}" ;;
    sampled) printf 'environment_variables:\n  PREFLIGHT_SAMPLE_FLOPS: "0"\n' ;;
    model) printf 'environment_variables:\n  PREFLIGHT_HOST_PARAMETERS: "1"\n' ;;
    esac
  } >"$dir/job.yaml"
  local start end
  start=$(date +%s.%N)
  "$preflight" run -q --json "$dir/report.json" --trace "$dir/trace.json.gz" "$dir/job.yaml" >/dev/null 2>&1 || true
  end=$(date +%s.%N)
  python3 - "$dir" "$start" "$end" <<'PY'
import gzip, json, sys
folder, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
report = json.load(open(folder + "/report.json"))
needed = ((report.get("estimate") or {}).get("gpu_memory") or {}).get("needed_bytes")
trace = json.load(gzip.open(folder + "/trace.json.gz"))
records = trace["traceEvents"] if isinstance(trace, dict) else trace
flops = next((r["args"].get("flops") for r in records if r.get("name") == "measured step"), None)
print(needed, flops, round(end - start, 1))
PY
}

echo "| job | batch | way | GPU memory needed | against the real step | FLOPs of the step | against the real step | dry run |"
echo "|---|---|---|---|---|---|---|---|"
for entry in "${cases[@]}"; do
  job=${entry%%|*}
  args=${entry#*|}
  read -r real_bytes real_flops real_seconds < <(measure "$job" "$args" real)
  for way in real sampled model; do
    if [[ $way == real ]]; then
      bytes=$real_bytes flops=$real_flops seconds=$real_seconds
    else
      read -r bytes flops seconds < <(measure "$job" "$args" "$way")
    fi
    python3 - "$job" "$args" "$way" "$bytes" "$flops" "$seconds" "$real_bytes" "$real_flops" <<'PY'
import sys
job, args, way, nbytes, flops, seconds, real_bytes, real_flops = sys.argv[1:]
names = {"real": "real step (dryrun.batch 0)", "sampled": "sampled; full-size check on shape-only tensors",
         "model": "whole model shape-only"}
def ratio(value, real):
    try:
        return "%+.2f%%" % (100.0 * (float(value) - float(real)) / float(real))
    except ValueError:
        return "n/a"
def gib(value):
    return "%.3f GiB" % (float(value) / (1 << 30)) if value not in ("None", "") else "none"
batch = args.split()[1]
print("| %s | %s | %s | %s | %s | %s | %s | %s s |" % (
    job, batch, names[way], gib(nbytes), "" if way == "real" else ratio(nbytes, real_bytes),
    "{:,}".format(int(float(flops))) if flops not in ("None", "") else "none",
    "" if way == "real" else ratio(flops, real_flops), seconds))
PY
  done
done
