# shellcheck shell=bash disable=SC2034,SC2154  # sets load_before/load_after for its caller, reads its work and preflight
# What the benchmarks of pairs share (measure.sh, watch.sh, trace.sh): each example's job with
# absolute paths, a variable set on one side, and the two sides run one after the other, RUNS
# times, so that a change in the machine's load falls on both. Sourced; the script sets `work`
# (its temporary folder) and `preflight` (the binary) first.

# The jobs written to `work` name the examples' folders, outside their own folder tree: the
# user grants them (docs/cli.md "--allow"), or every run stops at loading its job.
export PREFLIGHT_ALLOW=$PWD/examples

# Writes examples/EXAMPLE/job.yaml to OUT with its code and inputs as absolute paths, and its
# lines edited by the sed script SED.
example_job() {  # EXAMPLE OUT [SED]
  local example=$PWD/examples/$1
  sed -e "s|^name: .*|&\ncode: $example|" -e "s|path: \./|path: $example/|" -e "${3:-}" \
    "$example/job.yaml" >"$2"
}

# Writes the job IN to OUT with NAME=VALUE added to its environment_variables.
with_variable() {  # IN OUT NAME VALUE
  sed -e "s|^environment_variables: {|&$3: \"$4\", |" "$1" >"$2"
  grep -q "$3" "$2" || { echo "$0: no environment_variables in $1" >&2; exit 1; }
}

# Runs `preflight run -q` of WORK/CASE-on.yaml and WORK/CASE-off.yaml, one after the other
# (every other run in the reverse order: neither side always follows the other), RUNS times: "CASE SIDE WALL CPU" appended to WORK/times, each run's report to
# WORK/CASE-SIDE-RUN.json and its trace to WORK/CASE-SIDE-RUN.json.gz; load_before and
# load_after are the 1-minute load averages around it. With `baseline` set (another build of
# preflight), a third side, "before", runs that build on WORK/CASE-on.yaml.
run_pairs() {  # RUNS CASE...
  local runs=$1 run case side out sides binary job
  shift
  load_before=$(cut -d' ' -f1 /proc/loadavg)
  for run in $(seq "$runs"); do
    sides=(on off)
    [[ -z ${baseline:-} ]] || sides+=(before)
    ((run % 2)) || mapfile -t sides < <(printf '%s\n' "${sides[@]}" | tac)
    for case in "$@"; do
      for side in "${sides[@]}"; do
        out=$work/$case-$side-$run
        binary=$preflight job=$work/$case-$side.yaml
        [[ $side != before ]] || binary=$baseline job=$work/$case-on.yaml
        echo "$case $side $(python3 benchmarks/timed.py \
          "$binary" run -q --json "$out.json" --trace "$out.json.gz" "$job" || true)" \
          >>"$work/times"
      done
    done
  done
  load_after=$(cut -d' ' -f1 /proc/loadavg)
}
