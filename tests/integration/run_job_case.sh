#!/usr/bin/env bash
# Runs the real preflight binary under the real runc on one fixture job (tests/jobs/CASE) and
# checks what the user would see against the case's `expect` file: verdict, exit status,
# category, stage, file and line of the first error finding (of the dry run, when it ran), the
# first static error (`static=`), the first error's `prediction=` and a settled prediction
# (`predicted=`), that every error has a stage, the count of errors and warnings and where
# the first one of the dry run points, stages passed, a note, a clamp (`unenforced_KEY` when the platform's limits were not
# enforced, below). `job=FILE` runs another platform's job file (a PyTorchJob, a Slurm script) from a copy of
# the case, in the copy's folder, and then the job.yaml `preflight convert` gives for it, which must give the
# same exit status, verdict, category and stage. Afterwards no container, mount or leftover process of the run may remain.
# An unknown key, a key given twice, or verdict=pass without passed= fails the case before it runs.
# Usage: run_job_case.sh PREFLIGHT_BINARY CASE_DIR
set -u
source "$(dirname "$0")/lib.sh"

preflight=$1
case_dir=$2

# The keys an expect file may give, each checked below: what the run is given, then what
# it must show. `unenforced_KEY` stands for KEY when the platform's limits were not enforced.
run_keys=(command args untouched job)
result_keys=(exit verdict category stage file line message prediction predicted errors hint static warnings
  warning note clamp passed)
declare -A expect=()
number=0
while IFS='=' read -r key value || [[ -n $key ]]; do
  number=$((number + 1))
  [[ -z $key || $key == \#* ]] && continue
  if [[ " ${run_keys[*]} ${result_keys[*]} " != *" $key "* &&
    ! ($key == unenforced_* && " ${result_keys[*]} " == *" ${key#unenforced_} "*) ]]; then
    fail "$case_dir/expect:$number: unknown key '$key' (known: ${run_keys[*]} ${result_keys[*]}; unenforced_KEY for those after ${run_keys[-1]})"
  elif [[ -n ${expect[$key]+set} ]]; then
    fail "$case_dir/expect:$number: '$key' is given twice"
  fi
  expect[$key]=$value
done <"$case_dir/expect"
# A passing run names the stages it went through (a check has none): passed=, or
# unenforced_passed= for a run that passes only when the limits are not enforced.
if [[ ${expect[command]:-run} == run ]]; then
  [[ ${expect[verdict]:-} == pass && -z ${expect[passed]:-} ]] &&
    fail "$case_dir/expect: verdict=pass needs passed=STAGE... (the stages the run passes: jq .stages of its report)"
  [[ ${expect[unenforced_verdict]:-} == pass && -z ${expect[unenforced_passed]:-${expect[passed]:-}} ]] &&
    fail "$case_dir/expect: unenforced_verdict=pass needs unenforced_passed=STAGE... (the stages the run passes without root)"
fi
((failures == 0)) || finish
require_runtime

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=()
[[ -n ${expect[args]:-} ]] && read -r -a args <<<"${expect[args]}"
# A listing of a folder the run must not write (names, sizes, times).
listing() { (cd "$case_dir/$1" && find . -printf '%p %s %T@\n' | sort); }
job_file=$case_dir/job.yaml
if [[ -n ${expect[job]:-} ]]; then
  # Under the case's own name, which a job without one is named after (and its leftovers looked for by).
  cp -a "$case_dir" "$work/"
  case_dir=$work/$(basename "$case_dir")
  job_file=$case_dir/${expect[job]}
  cd "$case_dir" || fail "cannot enter $case_dir"
fi
[[ -n ${expect[untouched]:-} ]] && listing "${expect[untouched]}" >"$work/before"
# `command=check`: the static checks alone (preflight check), no container.
"$preflight" "${expect[command]:-run}" "$job_file" --json "$work/report.json" "${args[@]}" >"$work/stdout" 2>"$work/stderr"
status=$?
cat "$work/stdout"

[[ -f $work/report.json ]] || fail "no report.json written; stderr: $(tail -5 "$work/stderr")"
# Without root, the platform's memory, process and CPU limits are not enforced and the report
# says so (docs/rootless.md); a case whose result depends on one expects `unenforced_KEY=...`
# instead of `KEY=...` then. Root always enforces them.
unenforced=$(jq -r '.notes[]? | select(contains("is not enforced"))' "$work/report.json" 2>/dev/null)
if [[ -n $unenforced ]]; then
  [[ $(id -u) == 0 ]] && fail "a run as root left limits unenforced: $unenforced"
  for key in "${!expect[@]}"; do
    [[ $key == unenforced_* ]] && expect[${key#unenforced_}]=${expect[$key]}
  done
fi
check_equal "exit status" "${expect[exit]}" "$status"
# The dry run's findings when there are any (the static checks' come first in the report).
first_of() {  # SEVERITY
  echo "([.findings[] | select(.severity == \"$1\" and .phase == \"dryrun\")] + [.findings[] | select(.severity == \"$1\")])[0]"
}
first_error=$(first_of error)
check_equal "verdict" "${expect[verdict]}" "$(jq -r .verdict "$work/report.json")"
[[ -n ${expect[category]:-} ]] && check_equal "category" "${expect[category]}" "$(jq -r "$first_error.category" "$work/report.json")"
[[ -n ${expect[stage]:-} ]] && check_equal "stage" "${expect[stage]}" "$(jq -r "$first_error.stage" "$work/report.json")"
[[ -n ${expect[file]:-} ]] && check_equal "file" "${expect[file]}" "$(jq -r "$first_error.location.file" "$work/report.json")"
[[ -n ${expect[line]:-} ]] && check_equal "line" "${expect[line]}" "$(jq -r "$first_error.location.line" "$work/report.json")"
[[ -n ${expect[message]:-} ]] && check_contains "message" "${expect[message]}" "$(jq -r "$first_error.message" "$work/report.json")"
[[ -n ${expect[prediction]:-} ]] && check_equal "prediction" "${expect[prediction]}" "$(jq -r "$first_error.prediction" "$work/report.json")"
# `predicted=PREDICTION CATEGORY FILE:LINE`: a static finding settled that way (docs/diagnosis.md "Predictions").
if [[ -n ${expect[predicted]:-} ]]; then
  settled=$(jq -r '.findings[] | select(.prediction != null) | "\(.prediction) \(.category) \(.location.file):\(.location.line) stage=\(.stage)"' "$work/report.json")
  check_contains "settled predictions" "${expect[predicted]}" "$settled"
fi
# Every error names the stage it belongs to (docs/diagnosis.md "Stage of a failure").
check_equal "errors without a stage" "" "$(jq -r '.findings[] | select(.severity == "error" and .stage == null) | "\(.category) \(.location.file):\(.location.line)"' "$work/report.json")"
[[ -n ${expect[errors]:-} ]] && check_equal "errors" "${expect[errors]}" "$(jq '[.findings[] | select(.severity == "error")] | length' "$work/report.json")"
[[ -n ${expect[hint]:-} ]] && check_contains "hint" "${expect[hint]}" "$(jq -r "$first_error.hint" "$work/report.json")"
first_warning=$(first_of warning)
first_static='[.findings[] | select(.severity == "error" and .phase == "static")][0]'
[[ -n ${expect[static]:-} ]] && check_equal "static" "${expect[static]}" "$(jq -r "$first_static | \"\\(.category) \\(.location.file):\\(.location.line)\"" "$work/report.json")"
[[ -n ${expect[warnings]:-} ]] && check_equal "warnings" "${expect[warnings]}" "$(jq '[.findings[] | select(.severity == "warning")] | length' "$work/report.json")"
[[ -n ${expect[warning]:-} ]] && check_equal "warning" "${expect[warning]}" "$(jq -r "$first_warning | \"\\(.category) \\(.stage) \\(.location.file):\\(.location.line)\"" "$work/report.json")"
[[ -n ${expect[note]:-} ]] && check_contains "notes" "${expect[note]}" "$(jq -r '.notes[]' "$work/report.json")"
# `clamp=WHAT ORIGINAL → VALUE`: one of the values the dry run changed (the summary's `clamped:`).
[[ -n ${expect[clamp]:-} ]] && check_contains "clamps" "${expect[clamp]}" "$(jq -r '.clamps[] | "\(.what) \(.original) → \(.value)"' "$work/report.json")"
for stage in ${expect[passed]:-}; do
  check_equal "stage $stage" "passed" "$(jq -r ".stages[] | select(.name == \"$stage\") | .status" "$work/report.json")"
done
[[ -n ${expect[untouched]:-} ]] && check_equal "${expect[untouched]} untouched" "$(cat "$work/before")" "$(listing "${expect[untouched]}")"
check_no_leftovers "$(jq -r .job.name "$work/report.json")"
if [[ -n ${expect[job]:-} ]]; then
  # The job.yaml that stands for the file, beside it, run the same way (less the --map and
  # --code that the conversion took in), must meet the same end.
  converted=$case_dir/converted-job.yaml
  convert_args=()
  skip=0
  for arg in "${args[@]}"; do
    if ((skip)); then skip=0; continue; fi
    case $arg in
    --map | --code | --as) skip=1 ;;
    --map=* | --code=* | --as=*) ;;
    *) convert_args+=("$arg") ;;
    esac
  done
  read_args=()
  skip=0
  for arg in "${args[@]}"; do
    case $arg in
    --map | --code | --as) read_args+=("$arg"); skip=1 ;;
    --map=* | --code=* | --as=*) read_args+=("$arg") ;;
    *) if ((skip)); then read_args+=("$arg"); skip=0; fi ;;
    esac
  done
  "$preflight" convert "$job_file" "${read_args[@]}" >"$converted" 2>"$work/convert-stderr" ||
    fail "preflight convert failed: $(tail -3 "$work/convert-stderr")"
  "$preflight" "${expect[command]:-run}" "$converted" --json "$work/converted.json" "${convert_args[@]}" \
    >/dev/null 2>"$work/converted-stderr"
  converted_status=$?
  check_equal "exit status of the converted job.yaml" "$status" "$converted_status"
  for field in .verdict "$first_error.category" "$first_error.stage"; do
    check_equal "$field of the converted job.yaml" "$(jq -r "$field" "$work/report.json")" \
      "$(jq -r "$field" "$work/converted.json" 2>/dev/null)"
  done
  check_no_leftovers "$(jq -r .job.name "$work/converted.json" 2>/dev/null)"
fi
finish
