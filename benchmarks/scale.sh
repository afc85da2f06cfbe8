#!/usr/bin/env bash
# Dry runs of large models (issue 33), and writes its section of docs/benchmarks.md (from its
# heading up to its hand-written "### Reading these figures"): each job of benchmarks/scale/
# RUNS times (`preflight run -q`), its wall time and the most memory one process of the run held
# (GNU time's maximum resident set over the process tree: preflight, runc, the job and its
# children), the verdict, and the GPU memory the dry run says the step needs; beside the last,
# the peak the caching allocator reserved for the same step on a real GPU, from
# benchmarks/scale/results/*.json (benchmarks/scale/gpu_memory.py, run where a GPU is lent).
# A JOB is a folder of benchmarks/scale/ with its job.yaml, or a job file there (llama/7b.yaml).
# Usage: benchmarks/scale.sh [RUNS] [JOB[:RUNS]...]   (as root, after scripts/setup pytorch)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
shift || true
jobs=("$@")
[[ ${#jobs[@]} -gt 0 ]] || jobs=(resnet50 gpt2_small bert_large llama/1b3.yaml llama/7b.yaml llama/7b_lora.yaml)
preflight=${PREFLIGHT:-$PWD/build/preflight}
export PREFLIGHT_ALLOW=$PWD/benchmarks/scale  # the jobs' folders: theirs to read (docs/security.md)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

load_before=$(cut -d' ' -f1 /proc/loadavg)
for entry in "${jobs[@]}"; do
  job=${entry%%:*}
  count=$runs
  [[ $entry == *:* ]] && count=${entry#*:}
  file=benchmarks/scale/$job/job.yaml
  [[ $job == *.yaml ]] && file=benchmarks/scale/$job
  for ((run = 0; run < count; run++)); do
    /usr/bin/time -f "%e %M" -o "$work/time" "$preflight" run -q --json "$work/report.json" \
      "$file" >/dev/null 2>&1 || true
    jq -c --arg job "$job" --arg time "$(tail -1 "$work/time")" \
      '{job: $job, time: $time, verdict, category: ([.findings[] | select(.severity == "error")][0].category),
        needed: .estimate.gpu_memory.needed_bytes, gpu: .estimate.gpu, batch: .estimate.batch_size,
        sampled: .estimate.sampled_batch, clamps: [.clamps[] | select(.kind == "batch") | "\(.what) \(.original) → \(.value)"]}' \
      "$work/report.json" >>"$work/runs.jsonl"
  done
done
load_after=$(cut -d' ' -f1 /proc/loadavg)

python3 - "$work/runs.jsonl" "$runs" "$load_before" "$load_after" "$(git rev-parse --short HEAD)" \
  "$(python3 benchmarks/section.py machine)" >"$work/section.md" <<'PY'
import glob, json, os, statistics, sys
path, runs, before, after, commit, machine = sys.argv[1:]
GiB, FRAMEWORK = 1 << 30, 420 << 20  # docs/harness.md "Measuring a step": CUDA and cuBLAS, added to the model
gpus = {}
for result in sorted(glob.glob("benchmarks/scale/results/*.json")):
    measured = json.load(open(result))
    gpus[measured["gpu"]] = measured
by_job = {}
for line in open(path):
    entry = json.loads(line)
    by_job.setdefault(entry["job"], []).append(entry)
out = ["## Scale: large models in a dry run (issue 33)", ""]
out.append("Measured by `benchmarks/scale.sh` (%s runs of each unless the table says fewer) in one run at commit "
           "%s on: %s; 1-minute load average %s before the run and %s after it." % (
               runs, commit, machine, before, after))
out += ["", "| job | runs | dry run: median (range) | most memory of one process | verdict | sampled | GPU memory "
        "the step needs, by the dry run (less the 420 MiB framework) | reserved on a real GPU |",
        "|---|---|---|---|---|---|---|---|"]
for job, entries in by_job.items():
    seconds = [float(e["time"].split()[0]) for e in entries]
    memory = max(int(e["time"].split()[1]) for e in entries) * 1024
    last = entries[-1]
    verdict = last["verdict"].upper() + (" (%s)" % last["category"] if last["category"] else "")
    needed = last["needed"]
    model = "%.1f GiB on %s" % ((needed - FRAMEWORK) / GiB, last["gpu"]) if needed else "–"
    real = "–"
    for measured in gpus.values():
        if isinstance(measured.get(job), dict) and "reserved_peak" in measured[job]:
            peak = measured[job]["reserved_peak"]
            real = "%.1f GiB on %s (PyTorch %s)" % (peak / GiB, measured["gpu"], measured["torch"])
            if needed:
                real += ": the dry run %+.0f%%" % (100.0 * ((needed - FRAMEWORK) / peak - 1))
    out.append("| %s | %d | %.1f s (%.1f–%.1f s) | %.2f GiB | %s | %s | %s | %s |" % (
        job, len(seconds), statistics.median(seconds), min(seconds), max(seconds), memory / GiB, verdict,
        ", ".join(last["clamps"]) or "no", model, real))
print("\n".join(out) + "\n")
PY
python3 benchmarks/section.py write "$work/section.md"
cat "$work/section.md"
