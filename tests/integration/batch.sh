#!/usr/bin/env bash
# `preflight batch` against the same jobs run one by one: a job that passes, two predicted to
# fail (one in the dry run, one at a laptop path), and a job file with an unknown key, given
# as a list file. Each job's verdict and exit status in the merged report must equal its
# single run's; the batch's exit status is the merged one; the reports folder holds a report
# and a log per job, which `preflight collect` merges to the same counts; --shard splits the
# jobs without overlap; --image with a relative path is one image for jobs in different folders; a reports folder in use is refused; SIGTERM stops the batch with 130
# and leaves no container, mount or run behind. Another platform's job file (a PyTorchJob) is
# read in a batch as `preflight run` reads it: --map reaches each run, relative paths made absolute.
# Usage: batch.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
require_runtime
command -v jq >/dev/null || { echo "SKIP: jq is not installed" >&2; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

mkdir -p jobs/unknown_key
cp -r "$root/examples/mnist" jobs/mnist
cp -r "$root/tests/jobs/api_misuse_backward_without_grad" jobs/backward
cp -r "$root/tests/jobs/static_laptop_path" jobs/laptop
{ sed 's/^name: .*/name: unknown-key/' jobs/mnist/job.yaml && echo "gpu: 1"; } >jobs/unknown_key/job.yaml
cat >jobs.txt <<'EOF'
# the batch's jobs, relative to this list
jobs/mnist
jobs/backward/job.yaml
jobs/laptop
jobs/unknown_key/job.yaml
EOF
names=(mnist backward laptop unknown_key)

# One by one, as a user would run them.
declare -A single_verdict single_exit
for name in "${names[@]}"; do
  "$preflight" run "jobs/$name/job.yaml" -q --json "single-$name.json" >/dev/null 2>"single-$name.err"
  single_exit[$name]=$?
  single_verdict[$name]=$(jq -r .verdict "single-$name.json" 2>/dev/null || echo "no report")
done
check_equal "mnist alone" "0 pass" "${single_exit[mnist]} ${single_verdict[mnist]}"
check_equal "backward alone" "1 fail" "${single_exit[backward]} ${single_verdict[backward]}"
check_equal "laptop alone" "1 fail" "${single_exit[laptop]} ${single_verdict[laptop]}"
# A job that cannot be read still leaves a report saying so, for the tools that merge them.
check_equal "unknown key alone" "2 error" "${single_exit[unknown_key]} ${single_verdict[unknown_key]}"
check_contains "unknown key alone: the error" 'unknown key "gpu"' "$(jq -r .error.message single-unknown_key.json)"

# All of them at once.
"$preflight" batch jobs.txt -j 2 --reports reports --json merged.json --junit merged.xml >batch.out 2>batch.err
check_equal "the batch's exit status (a predicted failure outranks bad input)" 1 $?
check_equal "jobs in the merged report" 4 "$(jq .jobs merged.json)"
check_equal "counts" '{"error":1,"fail":2,"pass":1}' "$(jq -c '.counts' merged.json)"
for i in 0 1 2 3; do
  name=${names[$i]}
  check_equal "$name in the batch, as alone" "${single_verdict[$name]}" "$(jq -r ".reports[$i].report.verdict" merged.json)"
done
check_equal "the unreadable job's exit status" 2 "$(jq '.reports[3].report.error.exit' merged.json)"
check_equal "reports and logs kept" "8" "$(find reports -type f | wc -l)"
check_contains "a log holds the run's output" "preflight:" "$(cat reports/1-mnist.log)"
check_contains "the summary" "fail: 4 jobs, 1 passed, 2 failed, 1 not run (error)" "$(cat batch.out)"
check_contains "the progress" "[4/4]" "$(cat batch.err)"
check_contains "the JUnit report" 'tests="' "$(head -c 300 merged.xml)"

# The folder collected later gives the same.
"$preflight" collect reports --json collected.json >/dev/null 2>&1
check_equal "collect of the reports folder: exit" 1 $?
check_equal "collect of the reports folder: counts" "$(jq -c .counts merged.json)" "$(jq -c .counts collected.json)"

# A folder that holds reports already is refused: collect would mix two batches.
"$preflight" batch jobs/mnist --reports reports >/dev/null 2>used.err
check_equal "a reports folder in use: exit" 2 $?
check_contains "a reports folder in use: message" "holds files already" "$(cat used.err)"

# A platform or an image that does not exist is refused once, before any run starts.
"$preflight" batch jobs/mnist --platform no-such-platform --reports bad-platform >/dev/null 2>bad.err
check_equal "an unknown --platform: exit" 2 $?
check_contains "an unknown --platform: message" "--platform" "$(cat bad.err)"
[[ ! -e bad-platform ]] || fail "an unknown --platform: a reports folder was made"
"$preflight" batch jobs/mnist --image "no such:image" --reports bad-image >/dev/null 2>bad.err
check_equal "an unknown --image scheme: exit" 2 $?
check_contains "an unknown --image scheme: message" "--image" "$(cat bad.err)"

# Two shards take every job once. The laptop job alone is quick, so the shards run it alone.
for shard in 1 2; do
  "$preflight" batch jobs/laptop jobs/backward jobs/unknown_key --shard "$shard/2" -q --reports "shard$shard" \
    --json "shard$shard.json" >/dev/null 2>&1
  [[ -f shard$shard.json ]] || : >"shard$shard.json"
done
taken=$(jq -r '.reports[]?.report.job.file' shard1.json shard2.json | sort | tr '\n' ' ')
check_equal "two shards take each job once" \
  "jobs/backward/job.yaml jobs/laptop/job.yaml jobs/unknown_key/job.yaml " "$taken"

# --image checks every job against one image: a relative path is the working folder's, whatever
# folder each job lies in (here the python image's layout, linked in).
cache=${PREFLIGHT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/preflight}
if [[ -d $cache/images/python ]]; then
  cp -al "$cache/images/python" image-under-test 2>/dev/null || cp -a "$cache/images/python" image-under-test
  "$preflight" batch jobs/laptop jobs/unknown_key/../laptop/../backward --image oci:image-under-test -q \
    --reports on-image --json on-image.json >/dev/null 2>on-image.err
  check_equal "on one image: jobs" 2 "$(jq .jobs on-image.json)"
  check_equal "on one image: the image each job ran on" "oci:image-under-test oci:image-under-test" \
    "$(jq -r '[.reports[].report.image.ref] | join(" ")' on-image.json)"
  check_equal "on one image: one digest" 1 "$(jq '[.reports[].report.image.digest] | unique | length' on-image.json)"
  check_equal "on one image: no error" 0 "$(jq .counts.error on-image.json)"
fi

# A PyTorchJob, its claim mapped to a local copy given relative to the batch's folder.
cp -r "$root/tests/jobs/format_pytorchjob_pass" pytorchjob
(cd pytorchjob && "$preflight" batch pytorchjob.yaml --image pytorch --map pvc://digits-data=../pytorchjob/data -q \
  --reports ../kubeflow-reports --json ../kubeflow.json >/dev/null 2>&1)
check_equal "a PyTorchJob in a batch: exit" 0 $?
check_equal "a PyTorchJob in a batch: its verdict and platform" "pass kubeflow" \
  "$(jq -r '.reports[0].report | "\(.verdict) \(.platform)"' kubeflow.json)"
(cd pytorchjob && "$preflight" batch pytorchjob.yaml --image pytorch -q --reports ../unmapped-reports \
  --json ../unmapped.json >/dev/null 2>&1)
check_equal "a PyTorchJob in a batch without its --map: exit" 2 $?
check_contains "a PyTorchJob in a batch without its --map: the map to add" "--map pvc://digits-data=" \
  "$(jq -r '.reports[0].report.error.message' unmapped.json)"

# SIGTERM: no new run starts, the one going on is stopped and cleaned up, exit 130.
"$preflight" batch jobs/mnist jobs/backward -j 1 -q --reports stopped >stopped.out 2>stopped.err &
batch_pid=$!
for _ in $(seq 1 100); do
  [[ -n $(runtime_list | grep '^preflight-mnist-' || true) ]] && break
  sleep 0.2
done
kill -TERM "$batch_pid"
wait "$batch_pid"
check_equal "SIGTERM: exit" 130 $?
check_contains "SIGTERM: message" "1 of 2 jobs were started" "$(cat stopped.err)"
check_no_leftovers mnist
check_no_leftovers backward
[[ -z $(pgrep -f "preflight run jobs/backward" || true) ]] || fail "a run was left going on"

finish
