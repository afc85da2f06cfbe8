#!/usr/bin/env bash
# Files written to exhaust Preflight's readers (issue 30, docs/security.md "Bounded parsers"):
# YAML aliases that multiply (nested anchors, one long string aliased 150,000 times), a job
# definition of 60 MB, nesting far deeper than any real file (YAML, a JSON estimator, an
# estimator's Python, report.json given to collect and show). Each is refused with exit 2 and a
# message naming the file (and line), never exit 3 or a signal, in little memory and time. The
# files are generated here.
# Usage: hostile_files.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PREFLIGHT_CACHE=$work/cache
mkdir -p "$work/cache/runs/run-1" "$work/reports"
echo 'print("hello")' >"$work/train.py"

# Runs preflight ARGS... in at most 2 GiB of address space and 60 s (a reader without bounds
# ends in bad_alloc or a timeout, not in the machine's swap); output in $work/out, peak RSS
# (KiB) in $work/rss.
bounded() {
  (
    ulimit -v 2097152
    exec timeout 60 /usr/bin/time -f %M -o "$work/rss" "$preflight" "$@"
  ) >"$work/out" 2>&1 </dev/null
}

# NAME EXPECTED_STATUS MESSAGE_PART PREFLIGHT_ARGS...
expect() {
  local name=$1 expected=$2 message=$3
  shift 3
  bounded "$@"
  local status=$? rss
  check_equal "$name: exit status" "$expected" "$status"
  check_contains "$name: message" "$message" "$(cat "$work/out")"
  rss=$(tail -1 "$work/rss" 2>/dev/null)
  if ! [[ $rss =~ ^[0-9]+$ ]] || ((rss >= 262144)); then
    fail "$name: peak memory ${rss:-unknown} KiB (at most 256 MiB)"
  fi
}

python3 - "$work" <<'EOF'
import sys
work = sys.argv[1]

def write(name, text):
    with open(f"{work}/{name}", "w") as f:
        f.write(text)

# 568 bytes of nested anchors: nine levels of nine aliases, 9^9 strings once written out.
levels = ["  l0: &l0 [" + ",".join(['"lol"'] * 9) + "]"]
for n in range(1, 9):
    levels.append(f"  l{n}: &l{n} [" + ",".join([f"*l{n - 1}"] * 9) + "]")
write("laughs.yaml", "entry_point: train.py\nhyperparameters:\n" + "\n".join(levels) + "\n")

# One 400 KB string aliased 150,000 times, in a PyTorchJob's args and a Vertex job's.
long = '&s "' + "x" * 400_000 + '"'
aliases = ",".join(["*s"] * 150_000)
write("pytorchjob.yaml", f"""apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: floods}}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers:
            - name: pytorch
              image: python
              command: [{long}]
              args: [{aliases}]
""")
write("vertex.yaml", f"""workerPoolSpecs:
  - machineSpec: {{machineType: n1-standard-4}}
    replicaCount: 1
    containerSpec:
      imageUri: python
      command: [{long}]
      args: [{aliases}]
""")
# A job.yaml under 1 MiB with one string aliased 60,000 times.
env = ", ".join(f"V{i}: *s" for i in range(60_000))
write("job.yaml", f"command: python train.py\nsetup: {'&s ' + repr('y' * 200_000)}\n"
      f"environment_variables: {{{env}}}\n")

# A PyTorchJob of 60 MB, nested.
item = "".join(f"{'  ' * depth}k{depth}:\n" for depth in range(30)) + "  " * 30 + "v: 1\n"
write("big.yaml", "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nspec:\n" +
      "".join(f"  r{i}:\n" + "".join("    " + line + "\n" for line in item.splitlines())
              for i in range(60_000_000 // (len(item) + 40))))

# Nesting: YAML flow and block, a JSON estimator, an estimator's Python, report.json.
write("flow.yaml", "command: python train.py\nx: " + "[" * 100_000 + "]" * 100_000 + "\n")
write("block.yaml", "command: python train.py\n" + "".join(f"{' ' * i}a:\n" for i in range(1000)))
write("deep.json", '{"entry_point": "train.py", "hyperparameters": {"a": ' + "[" * 150_000 +
      "]" * 150_000 + "}}\n")
write("deep.py", "from sagemaker.pytorch import PyTorch\n\nestimator = PyTorch(\n    entry_point=\"train.py\",\n"
      "    hyperparameters=" + "[" * 500_000 + "]" * 500_000 + ")\n")
report = '{"schema": "preflight.report/v1", "verdict": "pass", "job": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
write("reports/report.json", report)
write("cache/runs/run-1/report.json", report)
EOF

expect "nested anchors (SageMaker YAML)" 2 "laughs.yaml:8:12:" check "$work/laughs.yaml"
check_contains "nested anchors: says why" "aliases, written out" "$(cat "$work/out")"
expect "a string aliased 150,000 times (PyTorchJob)" 2 "aliases, written out" check "$work/pytorchjob.yaml"
expect "a string aliased 150,000 times (Vertex)" 2 "aliases, written out" check "$work/vertex.yaml"
expect "a string aliased 60,000 times (job.yaml)" 2 "job.yaml:3:" check "$work/job.yaml"
expect "a 60 MB PyTorchJob" 2 "larger than 1.0 MiB" check "$work/big.yaml"
expect "YAML flow nesting" 2 "flow.yaml:2:" check "$work/flow.yaml"
check_contains "YAML flow nesting: says why" "nested more than 64 deep" "$(cat "$work/out")"
expect "YAML block nesting" 2 "block.yaml:66:" check "$work/block.yaml"
expect "a JSON estimator 150,000 deep" 2 "deep.json:1:" check --as sagemaker "$work/deep.json"
check_contains "JSON estimator: says why" "nested more than 64 deep" "$(cat "$work/out")"
expect "an estimator's Python 500,000 deep" 2 "deep.py:5:" check "$work/deep.py"
check_contains "Python estimator: says why" "nested more than 64 deep" "$(cat "$work/out")"
expect "collect: report.json 100,000 deep" 2 "report.json:1:" collect "$work/reports"
check_contains "collect: says why" "nested more than 64 deep" "$(cat "$work/out")"
expect "show: report.json 100,000 deep" 0 "nested more than 64 deep" show
finish
