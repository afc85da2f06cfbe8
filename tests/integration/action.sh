#!/usr/bin/env bash
# Preflight's GitHub Action (action.yml): valid against GitHub's action schema, the workflows
# docs/ci.md shows valid against the workflow schema (tests/tools/action_check.mjs, offline),
# and its steps run on this machine as GitHub's runner runs a composite action: the preflight
# under test on the PATH (no package to install), two job fixtures of the python image in a
# workspace, one that passes and one that would fail at its data stage. Checked: the images'
# cache key and paths, each job's SARIF, JUnit and HTML reports, the annotation at the failing
# line, the summary's rows, the upload of the reports, and the last step failing the action
# with the worst status; then the install step's refusals.
# Usage: action.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
tools=$root/tests/tools
command -v jq >/dev/null || { echo "SKIP: jq is not installed" >&2; exit 77; }
require_npm_package @action-validator/core

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
check() { node "$tools/action_check.mjs" "$@"; }

# The schemas, and a control: an action step without its shell is refused.
output=$(check validate "$root/action.yml" "$root/docs/ci.md" 2>&1)
check_equal "action.yml and docs/ci.md's workflows are valid: $output" 0 $?
check_contains "docs/ci.md's workflows were read" "workflow(s) of" "$output"
sed '/^      shell: bash$/d' "$root/action.yml" >"$work/no-shell.yml"
output=$(check validate "$work/no-shell.yml" 2>&1)
check_equal "an action step without its shell is refused" 1 $?
check_contains "the refusal names the step" "/runs/steps/0/shell" "$output"

# The steps, in a workspace holding two jobs, on this machine's preflight.
require_runtime
base=${PREFLIGHT_CACHE:-$HOME/.cache/preflight}/images/python
[[ -f $base/index.json ]] || { echo "SKIP: the python image is not built (scripts/setup python)" >&2; exit 77; }
mkdir -p "$work/bin" "$work/workspace/jobs"
ln -s "$preflight" "$work/bin/preflight"
cp -r "$root/tests/jobs/platform_sagemaker_pass" "$root/tests/jobs/permission_write_into_input" "$work/workspace/jobs/"
cat >"$work/inputs.json" <<EOF
{"inputs": {"jobs": "jobs/platform_sagemaker_pass/job.yaml\njobs/permission_write_into_input/job.yaml\n",
            "images": "python", "reports": "out"},
 "github": {"action_repository": "example/preflight", "action_ref": "main"},
 "env": {"PATH": "$work/bin:$PATH", "PREFLIGHT_DATA_DIR": "$root", "GITHUB_WORKSPACE": "$work/workspace"},
 "cwd": "$work/workspace"}
EOF
check steps "$root/action.yml" "$work/inputs.json" "$work/result.json"
check_equal "the steps ran" 0 $?
step() { jq -r --arg name "$1" ".steps[] | select(.name == \$name) | $2" "$work/result.json"; }

check_contains "install: the preflight on the PATH" "using $work/bin/preflight" "$(step "Install Preflight" .output)"
key=$(step "Name the images' cache" .outputs.key)
[[ $key =~ ^preflight-images-[0-9.]+-[0-9a-f]{64}$ ]] || fail "the images' cache key: got '$key'"
check_equal "the cache keeps the python image's layout" "${PREFLIGHT_CACHE:-$HOME/.cache/preflight}/images/python" \
  "$(step "Restore the built images" '.with.path')"
check_equal "the cache step gets the key" "$key" "$(step "Restore the built images" '.with.key')"

run_output=$(step "Run Preflight on the jobs" .output)
check_equal "the run step itself passes" 0 "$(step "Run Preflight on the jobs" .exit)"
check_equal "the worst status" 1 "$(jq -r .outputs.status "$work/result.json")"
for job in platform_sagemaker_pass permission_write_into_input; do
  for file in preflight.sarif preflight.xml report.html report.json; do
    [[ -s $work/workspace/out/jobs_${job}_job/$file ]] || fail "$job: no $file in out/jobs_${job}_job"
  done
done
check_equal "the passing job's verdict" pass \
  "$(jq -r .verdict "$work/workspace/out/jobs_platform_sagemaker_pass_job/report.json")"
check_contains "the annotation at the failing line" \
  "::error file=jobs/permission_write_into_input/prepare.py,line=14" "$run_output"
summary=$(jq -r .summary "$work/result.json")
check_contains "the summary's passing row" "| \`jobs/platform_sagemaker_pass/job.yaml\` | passed |" "$summary"
check_contains "the summary's failing row" \
  "| \`jobs/permission_write_into_input/job.yaml\` | **would fail** on the platform |" "$summary"
check_equal "the reports are uploaded" "out" "$(step "Upload the reports" '.with.path')"
check_equal "the action fails with the worst status" 1 "$(step "Fail when a job would fail" .exit)"

# The install step refuses what it cannot install, naming the input.
output=$(env -i PATH=/usr/bin:/bin PREFLIGHT_ACTION_REF=main "$root/scripts/action/install" 2>&1)
check_equal "no package and no preflight: refused" 1 $?
check_contains "the refusal names the input" "give the action's package input" "$output"
output=$(env -i PATH=/usr/bin:/bin PREFLIGHT_PACKAGE="$work/none.deb" "$root/scripts/action/install" 2>&1)
check_equal "a package that is not there: refused" 1 $?
check_contains "the refusal names the file" "$work/none.deb: no such file" "$output"

finish
