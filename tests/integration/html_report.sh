#!/usr/bin/env bash
# The HTML report and the trace of the real binary, opened as their readers open them, in
# Debian's Chromium with the npm tools pinned in tests/tools/package.json (scripts/setup --tests
# installs both). `preflight run --html --trace --json` on a passing job (examples/mnist) and
# on a failing one (tests/jobs/path_laptop_dataset: Path Not Found at train.py:11, stage data):
# - the page (tests/tools/html_check.mjs, headless, offline) shows the run's verdict, every
#   stage of report.json with its status, the first error finding with its code and
#   highlighted line, a failure span in the timeline; it logs no console error and requests
#   nothing but itself; its full-page screenshot is not blank;
# - the trace (tests/tools/trace_check.mjs) imports into speedscope and Chrome DevTools'
#   trace engine with no warning, one thread and every slice accounted for, and meets what
#   Perfetto's JSON importer requires (nested slices, numeric times, integer ids); the
#   passing run's trace holds each training iteration's split (data, forward, backward,
#   optimizer), its checkpoint and the measured step's layers; dcgan's and
#   word_language_model's traces pass the same checks and hold their iterations' split;
# - `preflight show` lists each run and prints the path of the page its folder kept.
# Controls first: both checkers must catch a broken page and a broken trace.
# The screenshots, pages and traces are kept in
# ${PREFLIGHT_TEST_ARTIFACTS:-build/test-artifacts}/html_report/ (a relative path is taken
# from the top of the repository).
# Usage: html_report.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
tools=$root/tests/tools
require_npm_package puppeteer-core speedscope
command -v jq >/dev/null || { echo "SKIP: jq is not installed" >&2; exit 77; }
chromium=${PREFLIGHT_CHROMIUM:-/usr/bin/chromium}
if [[ ! -x $chromium ]]; then
  echo "SKIP: $chromium is not installed (apt-get install chromium; scripts/setup --tests installs it)" >&2
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
artifacts=${PREFLIGHT_TEST_ARTIFACTS:-build/test-artifacts}
[[ $artifacts == /* ]] || artifacts=$root/$artifacts
artifacts=$artifacts/html_report
# The rootless run of the suite (scripts/test-rootless) cannot write root's build/: its
# screenshots stay in its temporary folder.
if rm -rf "$artifacts" 2>/dev/null && mkdir -p "$artifacts" 2>/dev/null && [[ -w $artifacts ]]; then
  echo "artifacts: $artifacts"
else
  echo "note: $artifacts is not writable; the screenshots are not kept" >&2
  artifacts=$work/artifacts
  mkdir -p "$artifacts"
fi

# Runs a checker; prints what it says; fails with WHAT if it finds a problem.
run_check() {  # WHAT TOOL ARG...
  local what=$1 tool=$2
  shift 2
  node "$tools/$tool" "$@" >"$work/check.out" 2>&1
  local status=$?
  cat "$work/check.out"
  ((status == 0)) || fail "$what: $tool exited $status"
}

# Controls: a page with the wrong verdict, a stage of the wrong status, a finding without its
# highlighted line, no failure span, a console error and a request off the page; a trace whose
# slices overlap. Each checker must exit 1 and name the problems.
cat >"$work/control.html" <<'EOF'
<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>control</title></head>
<body data-verdict="pass"><h1 id="verdict">PASS</h1>
<div class="stage" data-stage="data" data-status="passed">data</div>
<section class="finding" data-severity="error" data-category="Path Not Found" data-stage="data"
  data-location="train.py:11"><pre class="code">11  open("/home/bob/data.csv")</pre></section>
<svg id="timeline" width="200" height="20"><rect data-cat="stage" width="100" height="20"/></svg>
<img src="http://example.invalid/pixel.png" alt="">
<script>console.error("control: an error");</script>
</body></html>
EOF
node "$tools/html_check.mjs" "$work/control.html" --verdict fail --stage data=failed --finding train.py:11 --failure \
  --screenshot "$work/control.png" >"$work/control.out" 2>&1
check_equal "control: html_check exit status on a broken page" 1 "$?"
control=$(cat "$work/control.out")
check_contains "control: wrong verdict" 'verdict: expected <body data-verdict="fail">, found "pass"' "$control"
check_contains "control: wrong stage status" 'stage data: expected data-status="failed", found "passed"' "$control"
check_contains "control: no highlighted line" 'finding train.py:11: expected the highlighted line' "$control"
check_contains "control: no failure span" 'timeline: expected a [data-cat="failure"] span' "$control"
check_contains "control: console error" 'console error: control: an error' "$control"
check_contains "control: request off the page" 'request to http://example.invalid/pixel.png' "$control"

printf '%s' '{"traceEvents": [
  {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "stages"}},
  {"ph": "X", "pid": 1, "tid": 1, "name": "data", "cat": "stage", "ts": 0, "dur": 100},
  {"ph": "X", "pid": 1, "tid": 1, "name": "model", "cat": "stage", "ts": 50, "dur": 100}],
  "displayTimeUnit": "ms"}' | gzip >"$work/control.json.gz"
node "$tools/trace_check.mjs" "$work/control.json.gz" >"$work/control.out" 2>&1
check_equal "control: trace_check exit status on overlapping slices" 1 "$?"
control=$(cat "$work/control.out")
check_contains "control: perfetto's nesting" 'partly overlapping event 1 "data"' "$control"
check_contains "control: speedscope's importer" 'speedscope: warn: ts=100: Tried to end "data' "$control"

# The dry runs need a container runtime: runc as root, or rootless runc (docs/rootless.md).
if ! (require_runtime) 2>"$work/skip"; then
  finish >/dev/null
  echo "$(cat "$work/skip") — for the dry runs; the checkers' controls passed" >&2
  exit 77
fi

# Runs JOB with every output; checks the page and the trace. NAME names the artifacts.
check_run() {  # NAME JOB_YAML VERDICT EXIT
  local name=$1 job=$2 verdict=$3 exit=$4
  local page=$artifacts/$name.html trace=$artifacts/$name.trace.json.gz report=$artifacts/$name.report.json
  "$preflight" run -q "$job" --html "$page" --trace "$trace" --json "$report" >"$work/$name.out" 2>&1
  check_equal "$name: exit status" "$exit" "$?"
  [[ -s $report ]] || { fail "$name: no report.json written: $(tail -5 "$work/$name.out")"; return; }
  # The run folder kept its page: preflight show lists the run and prints the page's path.
  # Asked at once: the cache keeps the newest ten runs, and the suite's other tests run too.
  local job_name run shown
  job_name=$(jq -r .job.name "$report")
  run=$("$preflight" show | awk -v verdict="$verdict" -v job="$job_name" '$4 == verdict && $5 == job { print $1; exit }')
  if [[ -z $run ]]; then
    fail "$name: preflight show lists no $verdict run of $job_name"
  else
    shown=$("$preflight" show "$run")
    check_contains "$name: preflight show $run" "/$run/report.html" "$shown"
    [[ -s $shown ]] || fail "$name: preflight show $run: $shown is not there"
  fi
  check_equal "$name: verdict" "$verdict" "$(jq -r .verdict "$report")"
  [[ -s $page ]] || fail "$name: no HTML report written"
  [[ -s $trace ]] || fail "$name: no trace written"

  local args=(--verdict "$verdict" --screenshot "$artifacts/$name.png") stage
  while read -r stage; do
    args+=(--stage "$stage")
  done < <(jq -r '.stages[] | "\(.name)=\(.status)"' "$report")
  ((${#args[@]} > 4)) || fail "$name: report.json has no stages"
  if [[ $verdict == fail ]]; then
    # The first error, the dry run's when it has one (as run_job_case.sh reads it).
    local location
    location=$(jq -r '([.findings[] | select(.severity == "error" and .phase == "dryrun")]
      + [.findings[] | select(.severity == "error")])[0].location // empty | "\(.file):\(.line)"' "$report")
    [[ -n $location ]] || fail "$name: report.json has no error finding with a location"
    args+=(--finding "$location" --failure)
    echo "$name: first error at $location"
  fi
  run_check "$name: the page" html_check.mjs "$page" "${args[@]}"
  run_check "$name: the trace" trace_check.mjs "$trace"
}

check_run pass "$root/examples/mnist/job.yaml" pass 0
# Each training batch's split (the wait for data, forward, backward, the optimizer's step),
# the checkpoint and the measured step's layers are in the passing run's trace.
categories=" $(gzip -dc "$artifacts/pass.trace.json.gz" | jq -r '[.traceEvents[] | select(.ph == "X") | .cat] | unique | join(" ")') "
for category in stage data forward backward optimizer checkpoint layer step; do
  [[ $categories == *" $category "* ]] || fail "pass: the trace has no $category span (it has:$categories)"
done
# The other examples' traces load in the same viewers and hold each iteration's split; a
# loop that takes its batches by index (word_language_model) has no DataLoader wait.
for example in dcgan word_language_model; do
  trace=$artifacts/$example.trace.json.gz
  "$preflight" run -q "$root/examples/$example/job.yaml" --trace "$trace" >"$work/$example.out" 2>&1 ||
    fail "$example: exit status $?: $(tail -3 "$work/$example.out")"
  run_check "$example: the trace" trace_check.mjs "$trace"
  categories=" $(gzip -dc "$trace" | jq -r '[.traceEvents[] | select(.ph == "X") | .cat] | unique | join(" ")') "
  expected="stage forward backward optimizer step layer"
  [[ $example == dcgan ]] && expected+=" data"
  for category in $expected; do
    [[ $categories == *" $category "* ]] || fail "$example: the trace has no $category span (it has:$categories)"
  done
done
case_dir=$root/tests/jobs/path_laptop_dataset
check_run fail "$case_dir/job.yaml" fail 1
# What the fixture expects is what the page was checked for.
check_equal "fail: first error as the fixture expects" \
  "$(sed -n 's/^file=//p' "$case_dir/expect"):$(sed -n 's/^line=//p' "$case_dir/expect")" \
  "$(jq -r '([.findings[] | select(.severity == "error" and .phase == "dryrun")] + [.findings[] |
    select(.severity == "error")])[0].location | "\(.file):\(.line)"' "$artifacts/fail.report.json" 2>/dev/null)"
finish
