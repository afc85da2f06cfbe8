#!/usr/bin/env bash
# Many runs at once share one cache safely (issue 15): in a cache of its own, two unpacks of
# the pytorch image race into an empty cache, then 3 rounds of 8 `preflight run` at once (one
# job three times, other jobs that pass and fail, two of them on the python image, whose first
# use unpacks it from several runs at once). Each run's exit and verdict must be its case's
# `expect`, each report.json whole and its own job's; afterwards `preflight cache verify`
# passes (every entry's digest verifies), no container, mount, cgroup or process of the runs
# remains, runs/ holds no half-made folder and no more than the newest ten runs besides those
# that ran at once, and a prune leaves nothing held.
# Usage: concurrency.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
require_runtime
command -v jq >/dev/null || { echo "SKIP: jq is not installed" >&2 && exit 77; }
jobs_dir=$(cd "$(dirname "$0")/../jobs" && pwd -P)
started=$SECONDS

# The built images come from the user's cache (built there by the job cases if need be); the
# layouts are hard-linked into this test's cache, and their unpacked roots are not.
shared=${PREFLIGHT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/preflight}
for name in pytorch python; do
  PREFLIGHT_CACHE=$shared "$preflight" image build "$name" --if-missing >/dev/null ||
    { echo "SKIP: the $name image could not be built in $shared" >&2 && exit 77; }
done
work=$(mktemp -d)
cache=$work/preflight  # ends in preflight/, as check_no_leftovers looks for preflight/runs/
trap 'PREFLIGHT_CACHE=$cache "$preflight" cache prune >/dev/null 2>&1; rm -rf "$work"' EXIT
mkdir -p "$cache/images"
for name in pytorch python; do
  cp -al "$shared/images/$name" "$cache/images/$name" 2>/dev/null || cp -a "$shared/images/$name" "$cache/images/$name"
done
export PREFLIGHT_CACHE=$cache

# What is left of runs of this cache: processes whose root or working folder is in it.
processes_in_cache() {
  local proc link
  for proc in /proc/[0-9]*; do
    for link in root cwd; do
      [[ $(readlink "$proc/$link" 2>/dev/null) == "$cache"/* ]] && echo "${proc#/proc/} ($link $(readlink "$proc/$link"))"
    done
  done
}

# 1. Two unpacks of one image into an empty cache at once: both must get the image.
for i in 1 2; do
  "$preflight" image build pytorch --if-missing >"$work/unpack$i.out" 2>"$work/unpack$i.err" &
  unpackers[i]=$!
done
for i in 1 2; do
  wait "${unpackers[i]}" || fail "unpack $i failed: $(tail -3 "$work/unpack$i.err")"
  grep -q "unpacking image pytorch" "$work/unpack$i.err" ||
    fail "unpack $i found the image already there: the two unpacks did not race"
done
check_equal "the two unpacks' digests" "$(cat "$work/unpack1.out")" "$(cat "$work/unpack2.out")"
unpack_seconds=$((SECONDS - started))

# 2. Rounds of eight runs at once: the same job three times, and five others.
cases=(clean_json_config clean_json_config clean_json_config clean_max_steps
  api_misuse_backward_without_grad key_final_evaluation platform_sagemaker_pass predict_env_branch_taken)
expected() {  # CASE KEY
  sed -n "s/^$2=//p" "$jobs_dir/$1/expect"
}
rounds=3
for round in $(seq 1 "$rounds"); do
  round_started=$SECONDS
  pids=()
  for i in "${!cases[@]}"; do
    "$preflight" run -q "$jobs_dir/${cases[i]}/job.yaml" --json "$work/report-$round-$i.json" \
      >"$work/out-$round-$i" 2>"$work/err-$round-$i" &
    pids[i]=$!
  done
  for i in "${!cases[@]}"; do
    wait "${pids[i]}"
    status=$?
    what="round $round, run $i (${cases[i]})"
    check_equal "$what: exit status" "$(expected "${cases[i]}" exit)" "$status"
    report=$work/report-$round-$i.json
    if ! jq -e . "$report" >/dev/null 2>&1; then
      fail "$what: report.json is missing or not whole JSON; stderr: $(tail -3 "$work/err-$round-$i")"
      continue
    fi
    check_equal "$what: verdict" "$(expected "${cases[i]}" verdict)" "$(jq -r .verdict "$report")"
    check_equal "$what: the report's job" "$jobs_dir/${cases[i]}" "$(jq -r .job.code "$report")"
    category=$(expected "${cases[i]}" category)
    [[ -z $category ]] || check_contains "$what: the errors' categories" "$category" \
      "$(jq -r '.findings[] | select(.severity == "error") | .category' "$report")"
  done
  for name in $(jq -r .job.name "$work"/report-"$round"-*.json | sort -u); do
    check_no_leftovers "$name"
  done
  check_equal "round $round: processes left in the cache" "" "$(processes_in_cache)"
  echo "round $round: ${#cases[@]} runs at once in $((SECONDS - round_started)) s"
done

# 3. The cache afterwards: every entry verifies, and nothing is half made.
"$preflight" cache verify >"$work/verify" 2>&1 || fail "cache verify failed: $(cat "$work/verify")"
check_equal "images verified" 2 "$(grep -c ' verified: ' "$work/verify")"
check_equal "what did not verify" "" "$(grep -v -e ' verified: ' -e '^verifying' -e '^2 verified, 0 not verified, 0 failed$' "$work/verify")"
check_equal "half-made run folders" "" "$(find "$cache/runs" -mindepth 1 -maxdepth 1 -name '.*')"
# Each run removes all but the newest ten folders no live run holds before it makes its own; as
# runs overlap, those of a round made after the last removal stay too.
kept=$(find "$cache/runs" -mindepth 1 -maxdepth 1 -type d | wc -l)
((kept >= 1 && kept <= 10 + ${#cases[@]})) || fail "runs/ holds $kept folders, more than the newest ten and one round"
for dir in "$cache"/runs/*/; do
  name=$(jq -r .job.name "$dir/report.json" 2>/dev/null) || { fail "$dir has no whole report.json" && continue; }
  [[ $(basename "$dir") == "$name-"* ]] || fail "$dir holds the report of another job, $name"
done
# Nothing holds an image or a run folder any more: a prune removes them all.
"$preflight" cache prune >/dev/null 2>&1 || fail "cache prune failed"
check_equal "run folders held after the runs" "" "$(ls -A "$cache/runs")"
check_equal "images held after the runs" "" "$(ls -A "$cache/rootfs")"
check_equal "processes left in the cache" "" "$(processes_in_cache)"
echo "$((rounds * ${#cases[@]})) runs in $rounds rounds, 2 unpacks at once in ${unpack_seconds} s, $((SECONDS - started)) s in all"
finish
