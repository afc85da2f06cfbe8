#!/usr/bin/env bash
# The default image against the one it replaced (issue 32), side by side in one run, and writes
# its section of docs/benchmarks.md (from its heading up to its hand-written "### Reading these
# figures"):
#  1. the BLAS each image's PyTorch uses, and a 1024x1024x1024 product's and ten
#     Linear(1024, 1024) calls' time on one thread (benchmarks/images/blas.py, the best of 5);
#  2. the wall time of a dry run, `preflight run -q --image IMAGE`, of every bundled example and of
#     the matrix-heavy fixture clean_max_steps (a character-level GPT), RUNS runs of each on each
#     image, the images taking turns run by run so that the machine's load falls on both.
# Usage: benchmarks/images.sh [RUNS]   (as root, after scripts/setup pytorch pytorch-1.13)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
preflight=${PREFLIGHT:-$PWD/build/preflight}
images=(pytorch-1.13 pytorch)
jobs=(examples/mnist examples/word_language_model examples/dcgan examples/imagenet examples/vae
      tests/jobs/clean_max_steps)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for image in "${images[@]}"; do "$preflight" image build --if-missing "$image" >/dev/null; done

load_before=$(cut -d' ' -f1 /proc/loadavg)
for image in "${images[@]}"; do
  "$preflight" run --no-harness --image "$image" benchmarks/images/job.yaml 2>&1 |
    sed -n 's/^ *| BLAS //p' >"$work/blas-$image.json"
  [[ -s $work/blas-$image.json ]] || { echo "images.sh: no BLAS figures from image $image" >&2; exit 1; }
done
for job in "${jobs[@]}"; do
  for ((run = 0; run < runs; run++)); do
    for image in "${images[@]}"; do
      start=$(date +%s.%N)
      "$preflight" run -q --image "$image" --json "$work/report.json" "$job/job.yaml" >/dev/null 2>&1 || true
      end=$(date +%s.%N)
      verdict=$(jq -r .verdict "$work/report.json")
      echo "$job $image $verdict $(echo "$end - $start" | bc)" >>"$work/times"
    done
  done
done
load_after=$(cut -d' ' -f1 /proc/loadavg)

python3 - "$work" "$runs" "$load_before" "$load_after" "$(git rev-parse --short HEAD)" \
  "$(python3 benchmarks/section.py machine)" >"$work/section.md" <<'PY'
import json, statistics, sys
work, runs, before, after, commit, machine = sys.argv[1:]
blas = {image: json.load(open("%s/blas-%s.json" % (work, image))) for image in ("pytorch-1.13", "pytorch")}
times = {}
for line in open(work + "/times"):
    job, image, verdict, seconds = line.split()
    times.setdefault(job, {}).setdefault(image, []).append((float(seconds), verdict))
out = ["## The default image against PyTorch 1.13's (issue 32)", ""]
out.append("Measured by `benchmarks/images.sh` (%s runs of each dry run on each image, the images "
           "taking turns run by run) in one run at commit %s on: %s; 1-minute load average %s "
           "before the run and %s after it." % (runs, commit, machine, before, after))
out += ["", "### The BLAS and a matrix product", "",
        "`benchmarks/images/blas.py` in each image (`preflight run --no-harness`), one thread, "
        "the best of 5 after a warm-up.", "",
        "| image | PyTorch | BLAS_INFO | libblas.so.3 | 1024×1024×1024 product | 10 × Linear(1024, 1024), batch 256 |",
        "|---|---|---|---|---|---|"]
for image, b in blas.items():
    out.append("| %s | %s | %s | `%s` | %.1f ms | %.0f ms |" % (
        image, b["torch"], b["blas_info"], b["libblas"], b["matmul_s"] * 1e3, b["linear_s"] * 1e3))
old, new = blas["pytorch-1.13"], blas["pytorch"]
out += ["", "The product is %.1f× faster on pytorch, the Linear layers %.1f×." % (
    old["matmul_s"] / new["matmul_s"], old["linear_s"] / new["linear_s"])]
out += ["", "### Dry runs", "",
        "`preflight run -q --image IMAGE JOB`: the median wall time of the runs (their range), "
        "and the verdict.", "",
        "| job | pytorch-1.13 | pytorch | pytorch ÷ pytorch-1.13 |", "|---|---|---|---|"]
ratios = []
for job, by_image in times.items():
    cells = []
    for image in ("pytorch-1.13", "pytorch"):
        seconds = [s for s, _ in by_image[image]]
        verdicts = sorted(set(v for _, v in by_image[image]))
        cells.append("%.1f s (%.1f–%.1f s), %s" % (statistics.median(seconds), min(seconds), max(seconds),
                                                   "/".join(verdicts)))
    ratio = statistics.median([s for s, _ in by_image["pytorch"]]) / \
        statistics.median([s for s, _ in by_image["pytorch-1.13"]])
    ratios.append(ratio)
    out.append("| %s | %s | %s | %.2f |" % (job, cells[0], cells[1], ratio))
out += ["", "Geometric mean of pytorch ÷ pytorch-1.13 over the %d jobs: %.2f." % (
    len(ratios), statistics.geometric_mean(ratios))]
print("\n".join(out) + "\n")
PY
python3 benchmarks/section.py write "$work/section.md"
cat "$work/section.md"
