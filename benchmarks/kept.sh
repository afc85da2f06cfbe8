# shellcheck shell=bash disable=SC2034  # sets version and work for its caller
# What the benchmarks that keep `preflight estimate`s between runs share (published.sh,
# gpu/compare.sh). Sourced from the repository's root.

# version: "commit ABC", and which of the folders PATHS... have uncommitted changes.
set_version() {  # PATHS...
  local changed
  version="commit $(git rev-parse --short HEAD)"
  changed=$(git status --porcelain -- "$@")
  if [[ -n $changed ]]; then
    version+=" with uncommitted changes to $(awk '{print $2}' <<<"$changed" | cut -d/ -f1 | sort -u | paste -sd, -)"
  fi
}

# work: the folder KEPT names (made if missing), which keeps the estimates for a later run; else
# a temporary folder, removed at exit.
set_work() {  # KEPT
  if [[ -n $1 ]]; then
    work=$1
    mkdir -p "$work"
  else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
  fi
}
