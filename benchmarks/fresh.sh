#!/usr/bin/env bash
# The README's first command on a fresh Debian 12 machine, timed: a fresh root file system
# (mmdebstrap's minbase and ca-certificates: no compiler, no CMake, no runc), a clone of HEAD
# in it, and the README's first command run there as root (scripts/enter-root), everything
# fetched from Debian's mirror as a new machine would: the packages, the default image's
# packages. Its output lines are stamped as they come, so that the time splits into the
# packages, the build, the image and the dry run. Writes the "The README's first command on a
# fresh machine" section of docs/benchmarks.md.
# Usage: benchmarks/fresh.sh   (as root, on an otherwise idle machine; about 6 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The first command: the first line of the README's first ```sh block.
first=$(awk '/^```sh$/ {inside = 1; next} inside {print; exit}' README.md)
[[ -n $first ]] || { echo "fresh.sh: no first command in README.md" >&2; exit 1; }
mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$work/root" >/dev/null
git clone -q --no-hardlinks "$root" "$work/root/root/preflight"
cat >"$work/root/root/first.sh" <<EOF
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
cd /root/preflight
$first
EOF
# Each line stamped with the seconds since the start, read on this side of the pipe.
start=$EPOCHREALTIME
status=0
"$root/scripts/enter-root" "$work/root" bash /root/first.sh 2>&1 | while IFS= read -r line; do
  printf '%.1f %s\n' "$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" "$line"
done >"$work/log" || status=$?
total=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
[[ $status == 0 ]] || { tail -20 "$work/log" >&2; echo "fresh.sh: the first command failed" >&2; exit 1; }

# The parts, from the stamps: the packages until the first compile, the build until the
# image's build starts, the image until the dry run says it is running, the dry run after.
stamp() { awk -v pattern="$1" '$0 ~ pattern {print $1; exit}' "$work/log"; }
compile=$(stamp '\[1/[0-9]+\]')
image=$(stamp 'preflight: (building|mmdebstrap)')
running=$(stamp 'preflight: running ')
verdict=$(grep -m1 ' verdict: ' "$work/log" | sed 's/^[0-9.]* verdict: //')
part() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f s", b - a }'; }
section=$work/section.md
{
  echo "## The README's first command on a fresh machine (issue 35)"
  echo
  echo "\`benchmarks/fresh.sh\` at $(git rev-parse --short HEAD), $(date -u +%Y-%m-%d), on $(python3 benchmarks/section.py machine):"
  echo "\`$first\`"
  echo "as root in a fresh Debian 12 root file system (mmdebstrap's minbase with ca-certificates),"
  echo "everything fetched from Debian's mirror. Target: under 6 minutes."
  echo
  echo "| part | wall |"
  echo "|---|---|"
  echo "| the packages (apt) and CMake's configuration | $(part 0 "$compile") |"
  echo "| the build of the binary | $(part "$compile" "$image") |"
  echo "| the default image (mmdebstrap, its unpack) | $(part "$image" "$running") |"
  echo "| the dry run of examples/mnist | $(part "$running" "$total") |"
  echo "| **the whole command** | **$total s** |"
  echo
  echo "The dry run's verdict: $verdict."
  echo
} >"$section"
python3 benchmarks/section.py write "$section"
cat "$section"
