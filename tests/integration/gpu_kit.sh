#!/usr/bin/env bash
# The GPU check kit (benchmarks/gpu/kit.py, docs/benchmarks.md "The GPU check kit") on the CPU:
# tests/gpu_kit/test_kit.py runs the kit on two small models and on jobs made to fail, inside the
# pytorch image (its real torch; the host has none), as the job tests/gpu_kit/job.yaml, without
# the harness, which would clamp the kit's own training loops. Every case must run, none skipped.
# Usage: gpu_kit.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
require_runtime
command -v jq >/dev/null || { echo "SKIP: jq is not installed" >&2; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$preflight" run "$root/tests/gpu_kit/job.yaml" --no-harness --json "$work/report.json" >"$work/out" 2>&1
status=$?
# The job's own output, without the static checks' findings on the rest of the tree.
tests=$(grep -E '^\s*\| ' "$work/out" | sed -E 's/^\s*\| ?//')
echo "$tests"
check_equal "exit status" 0 "$status"
check_equal "verdict" pass "$(jq -r .verdict "$work/report.json" 2>/dev/null)"
check_contains "every case ran" "Ran 4 tests" "$tests"
check_equal "none skipped, none failed" OK "$(grep -E '^(OK|FAILED)' <<<"$tests")"
check_no_leftovers gpu-kit-cpu
finish
