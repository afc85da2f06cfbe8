#!/usr/bin/env bash
# Measures the error of the harness's step memory (docs/harness.md "Measuring a step") on a few
# known models and prints a Markdown table for docs/benchmarks.md. For each model, the dry run's
# GPU memory need (report.json estimate.gpu_memory.needed_bytes, less the modelled 420 MiB of
# CUDA context and cuBLAS workspace) is set against the ground truth: the same script without the harness, with
# every malloc/free counted by an LD_PRELOAD library (memory/peak.c), reporting the peak of the
# second step over what was allocated before the model was built.
# Usage: benchmarks/memory.sh   (as root, after scripts/setup pytorch)
set -euo pipefail
cd "$(dirname "$0")/.."
preflight=${PREFLIGHT:-$PWD/build/preflight}
context=$((420 << 20))  # kFrameworkBytes in src/diagnosis/during_run.hpp
command -v jq >/dev/null || apt-get install -y -qq jq >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/code"
cp benchmarks/memory/train.py "$work/code/"
gcc -O2 -shared -fPIC -Wall -Wextra -o "$work/code/libpeak.so" benchmarks/memory/peak.c

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

echo "| model | batch | measured by the harness | malloc's peak (truth) | error |"
echo "|---|---|---|---|---|"
for case in "mlp 256" "resnet18 16" "lstm 20" "transformer 16"; do
  read -r model batch <<<"$case"
  cat >"$work/$model.yaml" <<YAML
name: memory-$model
code: code
command: python train.py --model $model --batch-size $batch
resources: {gpus: 1}
YAML
  cat >"$work/$model-truth.yaml" <<YAML
name: memory-$model-truth
code: code
command: python train.py --model $model --batch-size $batch --truth
environment_variables: {LD_PRELOAD: /philly/code/libpeak.so}
YAML
  "$preflight" run -q --json "$work/$model.json" "$work/$model.yaml" >/dev/null 2>&1 || true
  needed=$(jq -r '.estimate.gpu_memory.needed_bytes // empty' "$work/$model.json")
  truth=$("$preflight" run --no-harness "$work/$model-truth.yaml" 2>&1 | sed -n 's/^  | truth bytes //p')
  if [[ -z $needed || -z $truth ]]; then
    echo "memory.sh: no figure for $model (needed: ${needed:-none}, truth: ${truth:-none})" >&2
    exit 1
  fi
  measured=$((needed - context))
  error=$(awk -v m="$measured" -v t="$truth" 'BEGIN { printf "%+.1f%%", 100 * (m - t) / t }')
  echo "| $model | $batch | $(mib "$measured") MiB | $(mib "$truth") MiB | $error |"
done
