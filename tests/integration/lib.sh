# shellcheck shell=bash
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
  [[ $(id -u) == 0 ]] && return
  # Without root, preflight runs containers in a user namespace of its own (docs/rootless.md).
  if ! command -v newuidmap >/dev/null || ! command -v newgidmap >/dev/null; then
    echo "SKIP: running containers without root needs newuidmap and newgidmap (apt-get install uidmap)" >&2
    exit 77
  fi
  local user
  user=$(id -un)
  if ! grep -q "^$user:" /etc/subuid || ! grep -q "^$user:" /etc/subgid; then
    echo "SKIP: running containers without root needs subordinate ids for $user in /etc/subuid and /etc/subgid" >&2
    exit 77
  fi
}

# The containers runc knows of, where preflight keeps them: runc's own state folder for root,
# the cache's runc/ folder without root.
runtime_list() {
  if [[ $(id -u) == 0 ]]; then
    runc list -q 2>/dev/null
  else
    runc --root "${PREFLIGHT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/preflight}/runc" list -q 2>/dev/null
  fi
}

# The mounts whose mountinfo line matches PATTERN (their point, or an overlay's layers) in the
# mount namespace of any process this user may look into, one line per mount: a rootless run's
# mounts are in its own namespaces, never in this one's (docs/rootless.md).
mounts_matching() {  # PATTERN
  cat /proc/[0-9]*/mountinfo 2>/dev/null | grep -- "$1" | awk '!seen[$1]++'
}

# No container or overlay mount of a job's runs may remain after its run: JOB_NAME as in job.yaml.
# $1: the job's name. Run ids are NAME-YYYYMMDD-HHMMSS-XXXX, so "vae" never matches the run of
# another job named "vae-clamped" going on at the same time.
check_no_leftovers() {
  local containers mounts cgroups day='[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]'
  containers=$(runtime_list | grep "^preflight-$1-$day-" || true)
  [[ -z $containers ]] || fail "containers left behind: $containers"
  mounts=$(mounts_matching "preflight/runs/$1-$day-")
  [[ -z $mounts ]] || fail "mounts left behind: $mounts"
  cgroups=$(find /sys/fs/cgroup -maxdepth 3 -path "*/preflight/preflight-$1-$day-*" 2>/dev/null || true)
  [[ -z $cgroups ]] || fail "cgroups left behind: $cgroups"
}

# Node and packages of the npm tools in tests/tools (scripts/setup --tests): without node the
# test is skipped; without a package, which the tests' setup installs, it fails.
require_npm_package() {  # PACKAGE...
  local tools package
  tools=$(cd "$(dirname "${BASH_SOURCE[0]}")/../tools" && pwd)
  command -v node >/dev/null || { echo "SKIP: node is not installed (scripts/setup --tests installs it)" >&2; exit 77; }
  for package in "$@"; do
    if [[ ! -d $tools/node_modules/$package ]]; then
      echo "FAIL: $package is not installed: run scripts/setup --tests (npm ci in tests/tools)" >&2
      exit 1
    fi
  done
}

finish() {
  if ((failures > 0)); then
    echo "$failures check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
}
