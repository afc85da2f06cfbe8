#!/usr/bin/env bash
# `preflight init` on each example's code without its hand-written job.yaml: the draft names
# the same entry script and finds the same inputs, and `preflight check` finds no error in it.
# An existing job.yaml is kept unless --force; a folder without an entry script is bad input.
# Usage: init_examples.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
root=$(cd "$(dirname "$0")/../.." && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for example in "$root"/examples/*/; do
  name=$(basename "$example")
  code=$work/$name
  cp -r "$example" "$code"
  rm -f "$code/job.yaml" "$code/expect"
  "$preflight" init "$code" >"$work/out" 2>"$work/err"
  check_equal "$name: init exit status" 0 "$?"
  check_contains "$name: init says what it wrote" "wrote $code/job.yaml" "$(cat "$work/out")"
  [[ -f $code/job.yaml ]] || { fail "$name: no job.yaml: $(cat "$work/err")"; continue; }
  entry=$(grep -o 'python [^ ]*\.py' "$example/job.yaml" | head -1)
  check_contains "$name: entry script" "command: $entry" "$(cat "$code/job.yaml")"
  while IFS= read -r input; do
    check_contains "$name: input $input" "{path: $input}" "$(cat "$code/job.yaml")"
  done < <(grep -o '{path: [^}]*}' "$example/job.yaml" | sed 's/{path: \(.*\)}/\1/')
  "$preflight" check "$code/job.yaml" >"$work/check" 2>&1
  check_equal "$name: check exit status" 0 "$?"
  check_contains "$name: check verdict" "verdict: PASS" "$(cat "$work/check")"
done

code=$work/mnist
"$preflight" init "$code" >"$work/out" 2>"$work/err"
check_equal "existing job.yaml: exit status" 2 "$?"
check_contains "existing job.yaml: message" \
  "preflight: error: $code/job.yaml: a job file is already there; preflight init --force replaces it" \
  "$(cat "$work/err")"
"$preflight" init --force --platform sagemaker "$code" >"$work/out" 2>"$work/err"
check_equal "--force: exit status" 0 "$?"
check_contains "--force: the new platform" "platform: sagemaker" "$(cat "$code/job.yaml")"

mkdir -p "$work/library"
printf 'def helper():\n    return 1\n' >"$work/library/helpers.py"
"$preflight" init "$work/library" >"$work/out" 2>"$work/err"
check_equal "no entry script: exit status" 2 "$?"
check_contains "no entry script: message" "no entry script found" "$(cat "$work/err")"
"$preflight" init "$work/missing" >"$work/out" 2>"$work/err"
check_equal "no such folder: exit status" 2 "$?"
finish
