#!/usr/bin/env bash
# Many runs at once share one cache safely (issues 15 and 30): in a cache of its own, two
# unpacks of the pytorch image race into an empty cache and 8 runs of jobs on the python image
# start together in it, then 3 rounds of 8 `preflight run` at once (one job three times, other
# jobs that pass and fail). An image is unpacked once however many find it missing together:
# one "unpacking image" line, the others wait, and the cache never holds more than about one
# copy of it. Each run's exit and verdict must be its case's
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

# 1. Two unpacks of one image into an empty cache at once: one unpacks, the other waits for
# it, and both get the image.
for i in 1 2; do
  "$preflight" image build pytorch --if-missing >"$work/unpack$i.out" 2>"$work/unpack$i.err" &
  unpackers[i]=$!
done
for i in 1 2; do
  wait "${unpackers[i]}" || fail "unpack $i failed: $(tail -3 "$work/unpack$i.err")"
done
check_equal "the two unpacks' digests" "$(cat "$work/unpack1.out")" "$(cat "$work/unpack2.out")"
check_equal "unpacks of pytorch" 1 "$(cat "$work"/unpack[12].err | grep -c "unpacking image pytorch")"
grep -q "waiting for another Preflight's unpack of image pytorch" "$work"/unpack[12].err ||
  fail "neither waited for the other's unpack: the two did not race"
unpack_seconds=$((SECONDS - started))

expected() {  # CASE KEY
  sed -n "s/^$2=//p" "$jobs_dir/$1/expect"
}

# Runs CASE... at once (all of run $1 as files $work/*-$1-I), then checks each one's exit,
# verdict, report and errors' category against its case's expect.
run_at_once() {  # ROUND CASE...
  local round=$1 i status what report category pids=()
  shift
  local cases=("$@")
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
}

# The bytes the cache's rootfs/ holds besides the pytorch image (unpacked in step 1).
pytorch_digest=$(cut -d" " -f2 "$work/unpack1.out")  # "pytorch sha256:..."
rootfs_bytes() {
  du -sb --exclude="sha256-${pytorch_digest#sha256:}" "$cache/rootfs" 2>/dev/null | cut -f1
}
# Writes to $work/peak, every 0.2 s until killed, the most that rootfs_bytes has been.
sample_rootfs_bytes() {
  local peak=0 bytes
  while true; do
    bytes=$(rootfs_bytes)
    ((${bytes:-0} > peak)) && peak=$bytes && echo "$peak" >"$work/peak"
    sleep 0.2
  done
}

# 2. Eight runs on the python image, not yet unpacked, at once: one unpacks it, the others wait
# and use it; the cache's rootfs/ grows by about one image meanwhile (5% over its size), and
# every verdict is its case's.
cold_started=$SECONDS
before=$(rootfs_bytes)
echo "$before" >"$work/peak"
sample_rootfs_bytes &
sampler=$!
run_at_once cold platform_sagemaker_pass predict_env_branch_taken platform_sagemaker_pass predict_env_branch_taken \
  platform_sagemaker_pass predict_env_branch_taken platform_sagemaker_pass predict_env_branch_taken
kill "$sampler" && wait "$sampler" 2>/dev/null
check_equal "unpacks of python by 8 runs at once" 1 "$(cat "$work"/err-cold-* | grep -c "unpacking image python")"
python_digest=$(jq -r .image.digest "$work/report-cold-0.json")
image_bytes=$(du -sb "$cache/rootfs/sha256-${python_digest#sha256:}" | cut -f1)
grown=$(($(cat "$work/peak") - before))
((grown <= image_bytes * 105 / 100)) ||
  fail "the cache's rootfs/ grew by $grown bytes while 8 runs unpacked python, more than one image ($image_bytes)"
echo "8 cold runs of python at once in $((SECONDS - cold_started)) s: rootfs/ grew by at most $grown bytes, the image is $image_bytes"

# 3. Rounds of eight runs at once: the same job three times, and five others.
cases=(clean_json_config clean_json_config clean_json_config clean_max_steps
  api_misuse_backward_without_grad key_final_evaluation platform_sagemaker_pass predict_env_branch_taken)
rounds=3
for round in $(seq 1 "$rounds"); do
  round_started=$SECONDS
  run_at_once "$round" "${cases[@]}"
  echo "round $round: ${#cases[@]} runs at once in $((SECONDS - round_started)) s"
done

# 4. The cache afterwards: every entry verifies, and nothing is half made.
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
