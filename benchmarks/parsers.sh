#!/usr/bin/env bash
# Measures the readers of what strangers write against the size of their input, and prints a
# Markdown table for docs/benchmarks.md ("Bounded, linear readers"): `preflight convert` of a
# SageMaker estimator's Python whose hyperparameters hold N literals (20,000 to 340,000, the
# largest under the 1 MiB bound), once with PREFLIGHT and, when BEFORE names another binary,
# once with it. A reader that is linear takes about the same time per literal at every size.
# Usage: benchmarks/parsers.sh   (PREFLIGHT=build/preflight, BEFORE=, LIMIT=120 seconds a run)
set -euo pipefail
cd "$(dirname "$0")/.."
preflight=${PREFLIGHT:-$PWD/build/preflight}
before=${BEFORE:-}
limit=${LIMIT:-120}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo 'print("train")' >"$work/train.py"

# CPU seconds (user + system) of `preflight convert FILE`, which a busy machine does not
# inflate as it does wall time, or ">LIMIT" when it ran longer than LIMIT seconds of wall time.
seconds() {
  /usr/bin/time -f '%x %U %S' -o "$work/times" timeout "$limit" "$1" convert "$2" >/dev/null 2>&1 || true
  local status user system
  read -r status user system < <(tail -1 "$work/times")
  if [[ $status == 124 ]]; then
    echo ">$limit"
  else
    awk -v u="$user" -v s="$system" 'BEGIN { printf "%.2f", u + s }'
  fi
}

echo "| literals | file | now, CPU | now, µs a literal |${before:+ before, CPU |}"
echo "|---|---|---|---|${before:+---|}"
for count in 20000 40000 90000 340000; do
  python3 - "$work/estimator.py" "$count" <<'PY'
import sys
path, count = sys.argv[1], int(sys.argv[2])
values = ",".join("1" for _ in range(count))
with open(path, "w") as f:
    f.write("from sagemaker.pytorch import PyTorch\n\nestimator = PyTorch(\n    entry_point=\"train.py\",\n"
            f"    hyperparameters={{\"sizes\": [{values}]}},\n)\n")
PY
  now=$(seconds "$preflight" "$work/estimator.py")
  per=$(awk -v s="$now" -v n="$count" 'BEGIN { printf "%.2f", s * 1e6 / n }')
  row="| $count | $(du -k "$work/estimator.py" | cut -f1) KiB | $now s | $per |"
  [[ -z $before ]] || row+=" $(seconds "$before" "$work/estimator.py") s |"
  echo "$row"
done
