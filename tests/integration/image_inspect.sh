#!/usr/bin/env bash
# `preflight image inspect`, `image diff` and `image check` on the real built-in images: the image's own Python is run in its
# root (no container), its distributions and frameworks are listed, and the module index is
# cached by digest, so a second inspection reads the cache; a job that needs torch passes on
# pytorch and is caught failing on python; the upgrade from pytorch-1.13 to pytorch names the job
# it breaks.
# Usage: image_inspect.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
command -v jq >/dev/null || { echo "SKIP: jq is not installed" >&2; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$preflight" image inspect pytorch --json >"$work/pytorch.json" 2>"$work/err" || fail "inspect pytorch: $(cat "$work/err")"
check_equal "schema" "preflight.image/v1" "$(jq -r .schema "$work/pytorch.json")"
check_contains "python" "3.13." "$(jq -r .python "$work/pytorch.json")"
check_equal "interpreter" "/usr/bin/python3" "$(jq -r .interpreter "$work/pytorch.json")"
check_contains "torch is a framework" "2.6" "$(jq -r .frameworks.torch "$work/pytorch.json")"
check_equal "numpy is a distribution" "1" "$(jq '[.distributions[] | select(.name == "numpy")] | length' "$work/pytorch.json")"
# Nothing broken: the recipe's edit makes Debian's torch accept Debian's sympy (docs/images.md).
check_equal "pip check" "0" "$(jq '.broken_requirements | length' "$work/pytorch.json")"
check_equal "os" "Debian GNU/Linux 13 (trixie)" "$(jq -r .os "$work/pytorch.json")"

"$preflight" image inspect python --json >"$work/python.json" 2>"$work/err" || fail "inspect python: $(cat "$work/err")"
check_equal "no framework in python" "{}" "$(jq -c .frameworks "$work/python.json")"
digest=$(jq -r .digest "$work/python.json")
cache=${PREFLIGHT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/preflight}
check_equal "index cached by digest" "1" "$(find "$cache/index" -maxdepth 1 -name "${digest#sha256:}-*.json" 2>/dev/null | wc -l)"

"$preflight" image inspect python >"$work/text" 2>&1 || fail "inspect text: $(cat "$work/text")"
check_contains "text names Python" "python: 3.11.2 (/usr/bin/python3)" "$(cat "$work/text")"
check_contains "text gives the pip check verdict" "requirements: all met (pip check)" "$(cat "$work/text")"
"$preflight" image diff python pytorch --json >"$work/diff.json" 2>"$work/err" || fail "diff: $(cat "$work/err")"
check_equal "diff: torch added" "added" "$(jq -r '.distributions[] | select(.name == "torch") | .change' "$work/diff.json")"
check_contains "diff: a newer python" "3.11.2 3.13." "$(jq -r '"\(.python.before) \(.python.after)"' "$work/diff.json")"
check_equal "diff: pip upgraded" "upgraded" "$(jq -r '.distributions[] | select(.name == "pip") | .change' "$work/diff.json")"
# A job that runs on pytorch and cannot on python (no torch there): image check and diff say so.
root=$(cd "$(dirname "$0")/../.." && pwd)
"$preflight" image check python --job "$root/examples/mnist/job.yaml" >"$work/check" 2>/dev/null
check_equal "image check: exit status" 1 "$?"
check_contains "image check: the job fails" 'mnist: fail — Library Not Found in stage init at train.py:7: the image cannot import "torch"' "$(cat "$work/check")"
"$preflight" image diff pytorch python --job "$root/examples/mnist/job.yaml" >"$work/diff" 2>/dev/null
check_contains "image diff: the job breaks" "breaks on python: mnist" "$(cat "$work/diff")"
check_contains "image diff: torch removed" "- torch 2.6.0+debian" "$(cat "$work/diff")"
# The upgrade the default image made (docs/images.md): a job of NumPy 1 breaks on it at its line,
# and a job of PyTorch 2 that failed on the old image runs. Copies of the fixtures, named
# "upgrade-...": the job.* tests run the fixtures themselves, maybe at the same time, and look
# for what a run of their name left behind. The one whose code is another's (code: ../NAME)
# gets a copy of that code, since a job file names only files of its own folder tree.
mkdir "$work/upgrade"
for fixture in version_numpy_removed_alias_on_1_13 version_torch_compile version_torch_compile_on_1_13; do
  cp -r "$root/tests/jobs/$fixture" "$work/upgrade/$fixture"
  sed -i -e "1i name: upgrade-$fixture" -e '/^code: /d' "$work/upgrade/$fixture/job.yaml"
done
cp "$root/tests/jobs/version_torch_compile/"*.py "$work/upgrade/version_torch_compile_on_1_13/"
"$preflight" image diff pytorch-1.13 pytorch --job "$work/upgrade/version_numpy_removed_alias_on_1_13/job.yaml" \
  --job "$work/upgrade/version_torch_compile/job.yaml" >"$work/upgrade.txt" 2>/dev/null
check_contains "upgrade: NumPy 2 breaks the job" \
  "upgrade-version_numpy_removed_alias_on_1_13: fail — Attribute Not Found in stage data at train.py:15" \
  "$(cat "$work/upgrade.txt")"
check_contains "upgrade: the jobs that break" "breaks on pytorch: upgrade-version_numpy_removed_alias_on_1_13" \
  "$(cat "$work/upgrade.txt")"
check_contains "upgrade: torch.compile runs" "upgrade-version_torch_compile: pass" "$(cat "$work/upgrade.txt")"
"$preflight" image diff pytorch-1.13 pytorch --job "$work/upgrade/version_torch_compile_on_1_13/job.yaml" \
  >"$work/fixed" 2>/dev/null
check_contains "upgrade: the jobs that run now" \
  "runs on pytorch, not on pytorch-1.13: upgrade-version_torch_compile_on_1_13" "$(cat "$work/fixed")"
finish
