# Shared checks for the integration suites: each failed check is printed, `finish` exits
# non-zero if any failed. A missing prerequisite exits 77, which CTest reports as a skip.

failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

check_equal() {  # WHAT EXPECTED ACTUAL
  [[ "$2" == "$3" ]] || fail "$1: expected '$2', got '$3'"
}

check_contains() {  # WHAT NEEDLE HAYSTACK
  [[ "$3" == *"$2"* ]] || fail "$1: expected it to contain '$2', got '$3'"
}

require_runtime() {
  if ! command -v runc >/dev/null; then
    echo "SKIP: runc is not installed (apt-get install runc)" >&2
    exit 77
  fi
  if [[ $(id -u) != 0 ]]; then
    echo "SKIP: running containers needs root in this version" >&2
    exit 77
  fi
}

# No container or overlay mount of a job's runs may remain after its run: JOB_NAME as in job.yaml.
# $1: the job's name. Run ids are NAME-YYYYMMDD-HHMMSS-XXXX, so "vae" never matches the run of
# another job named "vae-clamped" going on at the same time.
check_no_leftovers() {
  local containers mounts cgroups day='[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]'
  containers=$(runc list -q 2>/dev/null | grep "^preflight-$1-$day-" || true)
  [[ -z $containers ]] || fail "containers left behind: $containers"
  mounts=$(grep "preflight/runs/$1-$day-" /proc/self/mountinfo || true)
  [[ -z $mounts ]] || fail "mounts left behind: $mounts"
  cgroups=$(find /sys/fs/cgroup -maxdepth 3 -path "*/preflight/preflight-$1-$day-*" 2>/dev/null || true)
  [[ -z $cgroups ]] || fail "cgroups left behind: $cgroups"
}

finish() {
  if ((failures > 0)); then
    echo "$failures check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
}
