#!/usr/bin/env bash
# Measures the static checks side by side with baselines and prints Markdown tables for
# docs/benchmarks.md:
#  1. `preflight check` (warm: the image unpacked and its module index cached) on a generated
#     repository of 50 Python files, 10,000 lines, with the code changed before each run (so
#     scanned again) and unchanged (its scan kept), against `python3 -m compileall` of the
#     same files in the image's own Python (byte-compiling is a lower bound on reading them);
#  2. `preflight image inspect pytorch` cold (no module index cached) and warm, against
#     `pip list` run by the image's Python in the image's root.
# Usage: benchmarks/check.sh [RUNS]   (as root, after scripts/setup pytorch)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
preflight=${PREFLIGHT:-$PWD/build/preflight}
command -v hyperfine >/dev/null || apt-get install -y -qq hyperfine >/dev/null
command -v jq >/dev/null || apt-get install -y -qq jq >/dev/null
cache=${PREFLIGHT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/preflight}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A training repository: 50 modules of 200 lines with imports, argparse, environment reads,
# DataLoaders and model code, the entry script importing them all.
python3 - "$work/repo" <<'PY'
import os, sys
root = sys.argv[1]
os.makedirs(os.path.join(root, "models"))
open(os.path.join(root, "models", "__init__.py"), "w").close()
block = '''

class Block{n}(nn.Module):
    """Residual block {n}."""

    def __init__(self, width=64):
        super().__init__()
        self.conv = nn.Conv2d(width, width, 3, padding=1)
        self.norm = nn.BatchNorm2d(width)

    def forward(self, x):
        return F.relu(self.norm(self.conv(x))) + x


def train_{n}(model, loader, optimizer, device):
    model.train()
    total = 0.0
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / max(1, len(loader))
'''
header = "import os\nimport math\n\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
for i in range(49):
    text = header + "".join(block.format(n=i * 10 + k) for k in range(7))
    lines = text.splitlines()[:200]
    lines += ["# padding"] * (200 - len(lines))
    with open(os.path.join(root, "models", "m%02d.py" % i), "w") as f:
        f.write("\n".join(lines) + "\n")
entry = ["import argparse", "import os", "", "import torch", ""]
entry += ["from models import m%02d" % i for i in range(49)]
entry += ["", "def main():", "    parser = argparse.ArgumentParser()",
          "    parser.add_argument('--epochs', type=int, default=10)",
          "    parser.add_argument('--data', default=os.environ.get('DATA_DIR', 'data'))",
          "    args = parser.parse_args()", "    print(args)", "", "", "if __name__ == '__main__':", "    main()"]
entry += ["# padding"] * (200 - len(entry))
with open(os.path.join(root, "train.py"), "w") as f:
    f.write("\n".join(entry) + "\n")
with open(os.path.join(root, "job.yaml"), "w") as f:
    f.write("command: python train.py --epochs 3\n")
PY
lines=$(cat "$work"/repo/*.py "$work"/repo/models/*.py | wc -l)
files=$(printf '%s\n' "$work"/repo/*.py "$work"/repo/models/*.py | wc -l)

"$preflight" check "$work/repo/job.yaml" >/dev/null 2>&1 || true  # warm: image and index cached
digest=$("$preflight" image inspect pytorch --json 2>/dev/null | jq -r .digest)
rootfs=$cache/rootfs/${digest/:/-}/rootfs
mkdir -p "$rootfs/tmp"
python_in_image="unshare --root=$rootfs /usr/bin/python3 -I -B"

# compileall in the image needs the files inside its root: a copy under its /tmp, removed after.
copy=$rootfs/tmp/preflight-bench-$$
cp -r "$work/repo" "$copy"
trap 'rm -rf "$work" "$copy"' EXIT

# A line added to the entry script before each run makes the code new to the scan's cache
# (docs/static-checks.md "The scan's cache"): the image's Python reads every file again.
hyperfine -N --warmup 2 --runs "$runs" --export-json "$work/check.json" \
  --prepare "sh -c 'date +%N | sed s/^/#/ >>$work/repo/train.py'" -n "preflight check (warm, code changed)" \
  "$preflight check $work/repo/job.yaml" \
  --prepare true -n "preflight check (warm, scan kept)" "$preflight check $work/repo/job.yaml" \
  --prepare true -n "compileall in the image" "$python_in_image -m compileall -q -f -d /x /tmp/preflight-bench-$$" >&2
rm -rf "$copy"

hyperfine -N --runs "$runs" --export-json "$work/inspect.json" \
  --prepare "rm -rf $cache/index" -n "image inspect (cold)" "$preflight image inspect pytorch" >&2
hyperfine -N --warmup 2 --runs "$runs" --export-json "$work/inspect-warm.json" \
  -n "image inspect (warm)" "$preflight image inspect pytorch" \
  -n "pip list in the image" "$python_in_image -m pip list --disable-pip-version-check" >&2

row() { jq -r '.results[] | "| \(.command) | \(.mean * 1000 | round) ± \(.stddev * 1000 | round) ms | \(.min * 1000 | round) ms |"' "$1"; }
echo "Repository: $files files, $lines lines; $runs runs each; commit $(git rev-parse --short HEAD)."
echo
echo "| command | mean ± sd | min |"
echo "|---|---|---|"
row "$work/check.json"
row "$work/inspect.json"
row "$work/inspect-warm.json"
