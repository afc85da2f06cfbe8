#!/usr/bin/env bash
# The CI outputs of the real binary, read back by the tools CI servers use (pinned in
# tests/tools/package.json, installed by scripts/setup --tests): `--sarif` must pass Microsoft's SARIF
# multitool `validate` with no error-level result, `--junit` must read back through a JUnit
# parser with the counts and failure message the run had, and GITHUB_ACTIONS=true must print
# workflow commands at the job's file and line. Fixtures: static_laptop_path (preflight
# check) and, with a container runtime, key_final_evaluation (a dry-run failure at evaluate);
# then `preflight collect` of the three reports, merged, through the same readers.
# Usage: ci_formats.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
tools=$root/tests/tools
require_npm_package @microsoft/sarif-multitool test-results-parser
command -v jq >/dev/null || { echo "SKIP: jq is not installed" >&2; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Validates a SARIF log; prints the validator's findings; fails on an error-level one (the
# multitool exits 0 with errors in its own log, so its log is what counts).
validate_sarif() {  # WHAT FILE
  "$tools/node_modules/.bin/sarif-multitool" validate "$2" -o "$work/validation.sarif" --log ForceOverwrite \
    >"$work/validator.out" 2>&1 || { fail "$1: the validator failed: $(tail -5 "$work/validator.out")"; return; }
  grep -E ': (error|warning|note) ' "$work/validator.out" >&2
  check_equal "$1: validator errors" 0 "$(jq '[.runs[].results[]? | select(.level == "error")] | length' \
    "$work/validation.sarif")"
}

# The JUnit file as test-results-parser reads it (the parser behind testbeats, maintained,
# JUnit as Jenkins, GitLab and Ant write it: counts from the testsuite attributes, a case's
# status from its <failure>/<error>/<skipped>), after fast-xml-parser's well-formedness check.
read_junit() {  # FILE
  NODE_PATH=$tools/node_modules node -e '
    const {XMLValidator} = require("fast-xml-parser");
    const {parse} = require("test-results-parser");
    const file = process.argv[1];
    const valid = XMLValidator.validate(require("fs").readFileSync(file, "utf8"));
    if (valid !== true) { console.log(JSON.stringify({invalid: valid.err})); process.exit(0); }
    const result = parse({type: "junit", files: [file]});
    const cases = result.suites.flatMap(s => s.cases);
    console.log(JSON.stringify({
      suites: result.suites.map(s => s.name), total: result.total, failed: result.failed,
      skipped: result.skipped,
      cases: cases.map(c => ({name: c.name, status: c.status, failure: c.failure}))}));
  ' "$1"
}

# A control: the checks above fail on a log the validator rejects and on malformed XML.
echo '{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"},
  "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a.py"}, "region": {"startLine": 0}}}]}]}]}' \
  >"$work/bad.sarif"
failures_before=$failures
validate_sarif "control" "$work/bad.sarif" 2>/dev/null
check_equal "control: a bad SARIF log is caught" $((failures_before + 1)) "$failures"
failures=$failures_before
echo '<testsuites><testsuite name="x">a & b</testsuite></testsuites>' >"$work/bad.xml"
check_contains "control: malformed XML is caught" '"invalid"' "$(read_junit "$work/bad.xml")"

# preflight check --strict (predictions fail the gate): a static error in the job's code, no stages.
case_dir=$root/tests/jobs/static_laptop_path
"$preflight" check --strict "$case_dir/job.yaml" --json "$work/check.json" --junit "$work/check.xml" --sarif "$work/check.sarif" \
  >"$work/out" 2>&1
check_equal "check: exit status" 1 "$?"
validate_sarif "check" "$work/check.sarif"
check_equal "check: rule" "path-not-found" "$(jq -r '.runs[0].tool.driver.rules[0].id' "$work/check.sarif")"
check_equal "check: result" "error CODE train.py 4" "$(jq -r '.runs[0].results[0] | [.level,
  (.locations[0].physicalLocation | .artifactLocation.uriBaseId, .artifactLocation.uri, .region.startLine)] | join(" ")' \
  "$work/check.sarif")"
check_equal "check: code folder" "file://$case_dir/" "$(jq -r '.runs[0].originalUriBaseIds.CODE.uri' "$work/check.sarif")"
junit=$(read_junit "$work/check.xml")
errors=$(jq '[.findings[] | select(.severity == "error")] | length' "$work/check.json")
((errors >= 1)) || fail "check: the fixture has no error finding"
check_equal "check: suite" '["static_laptop_path@philly"]' "$(jq -c .suites <<<"$junit")"
check_equal "check: failed cases as the report has errors" "$errors" "$(jq .failed <<<"$junit")"
check_equal "check: failed cases counted by status" "$errors" "$(jq '[.cases[] | select(.status == "FAIL")] | length' <<<"$junit")"
check_equal "check: first case" "Path Not Found at train.py:4" "$(jq -r '.cases[0].name' <<<"$junit")"
check_contains "check: failure message" "in bob's home folder" "$(jq -r '.cases[0].failure' <<<"$junit")"

# Without --strict the same prediction is a warning, and the gate passes (docs/diagnosis.md "Predictions").
"$preflight" check "$case_dir/job.yaml" --json "$work/lenient.json" --sarif "$work/lenient.sarif" >/dev/null 2>&1
check_equal "check without --strict: exit status" 0 "$?"
check_equal "check without --strict: result" "warning" "$(jq -r '.runs[0].results[0].level' "$work/lenient.sarif")"

# Under GitHub Actions: workflow commands at the file relative to the repository.
GITHUB_ACTIONS=true GITHUB_WORKSPACE=$root "$preflight" check --strict "$case_dir/job.yaml" --sarif "$work/gh.sarif" \
  >"$work/gh.out" 2>/dev/null
check_contains "annotation" "::error file=tests/jobs/static_laptop_path/train.py,line=4,title=Path Not Found::" \
  "$(cat "$work/gh.out")"
check_equal "no annotations outside GitHub Actions" 0 "$(grep -c '^::' "$work/out")"
check_equal "SARIF under GitHub Actions" "SRCROOT tests/jobs/static_laptop_path/train.py" "$(jq -r \
  '.runs[0].results[0].locations[0].physicalLocation.artifactLocation | "\(.uriBaseId) \(.uri)"' "$work/gh.sarif")"
validate_sarif "github" "$work/gh.sarif"

# preflight run: a dry run that fails at evaluate, after five stages passed; the JUnit counts
# are those of report.json.
# It needs a container runtime: runc as root, or rootless runc (docs/rootless.md).
if ! (require_runtime) 2>"$work/skip"; then
  finish >/dev/null
  echo "$(cat "$work/skip") — for the dry-run half; the preflight check half passed" >&2
  exit 77
fi
case_dir=$root/tests/jobs/key_final_evaluation
"$preflight" run -q "$case_dir/job.yaml" --json "$work/run.json" --junit "$work/run.xml" --sarif "$work/run.sarif" \
  >"$work/out" 2>&1
check_equal "run: exit status" 1 "$?"
validate_sarif "run" "$work/run.sarif"
check_equal "run: rule" "key-not-found" "$(jq -r '.runs[0].results[0].ruleId' "$work/run.sarif")"
check_equal "run: stage" "evaluate" "$(jq -r '.runs[0].results[0].properties.stage' "$work/run.sarif")"
junit=$(read_junit "$work/run.xml")
check_equal "run: cases" "$(jq '(.stages | length) + (.findings | length)' "$work/run.json")" \
  "$(jq '.cases | length' <<<"$junit")"
check_equal "run: skipped" "$(jq '[.stages[] | select(.status == "absent" or .status == "not_reached")] | length' \
  "$work/run.json")" "$(jq .skipped <<<"$junit")"
check_equal "run: failed" "$(jq '[.stages[] | select(.status == "failed")] + [.findings[] | select(.severity == "error")]
  | length' "$work/run.json")" "$(jq .failed <<<"$junit")"
check_equal "run: predict skipped" "SKIP" "$(jq -r '.cases[] | select(.name == "predict") | .status' <<<"$junit")"
check_equal "run: evaluate failed" "FAIL" "$(jq -r '.cases[] | select(.name == "evaluate") | .status' <<<"$junit")"
check_equal "run: train passed" "PASS" "$(jq -r '.cases[] | select(.name == "train") | .status' <<<"$junit")"
check_contains "run: failure message" "Key Not Found in stage evaluate at train.py:33" \
  "$(jq -r '.cases[] | select(.name == "evaluate") | .failure' <<<"$junit")"

# preflight collect: the three reports above, as a cluster's tasks would leave them in a shared
# folder (with a file that is not a report), merged into one summary and one set of CI files.
mkdir -p "$work/tasks/0" "$work/tasks/1" "$work/tasks/2"
cp "$work/check.json" "$work/tasks/0/report.json"
cp "$work/lenient.json" "$work/tasks/1/report.json"
cp "$work/run.json" "$work/tasks/2/report.json"
echo '{"schema": "preflight.estimate/v1"}' >"$work/tasks/2/estimate.json"
"$preflight" collect "$work/tasks" --json "$work/all.json" --junit "$work/all.xml" --sarif "$work/all.sarif" \
  >"$work/collect.out" 2>&1
check_equal "collect: exit status (a job fails)" 1 "$?"
check_equal "collect: counts" '{"error":0,"fail":2,"pass":1}' "$(jq -c .counts "$work/all.json")"
check_equal "collect: by stage" '{"data":1,"evaluate":1}' "$(jq -c .stages "$work/all.json")"
check_equal "collect: each report as written" "$(jq -c . "$work/run.json")" "$(jq -c '.reports[2].report' "$work/all.json")"
check_contains "collect: the summary" "fail: 3 jobs, 1 passed, 2 failed" "$(cat "$work/collect.out")"
validate_sarif "collect" "$work/all.sarif"
check_equal "collect: one SARIF run" 1 "$(jq '.runs | length' "$work/all.sarif")"
check_equal "collect: every finding" "$(jq -s 'map(.findings | length) | add' "$work/check.json" "$work/lenient.json" \
  "$work/run.json")" "$(jq '.runs[0].results | length' "$work/all.sarif")"
junit=$(read_junit "$work/all.xml")
check_equal "collect: a suite per job" 3 "$(jq '.suites | length' <<<"$junit")"
check_equal "collect: cases of all" "$(jq -s 'map((.stages | length) + (.findings | length)) | add' "$work/check.json" \
  "$work/lenient.json" "$work/run.json")" "$(jq '.cases | length' <<<"$junit")"
"$preflight" collect "$work/tasks/1" >/dev/null 2>&1
check_equal "collect: exit status (all pass)" 0 "$?"
echo '{"schema": "preflight.rep' >"$work/tasks/1/report.json"
"$preflight" collect "$work/tasks" >"$work/collect.out" 2>&1
check_equal "collect: a report cut short is bad input" 2 "$?"
check_contains "collect: names it" "tasks/1/report.json is not JSON" "$(cat "$work/collect.out")"
finish
