#!/usr/bin/env bash
# How long Preflight takes to build from a fresh clone of HEAD, with full debug info (-g,
# PREFLIGHT_FULL_DEBUG_INFO=ON) and with line tables only (-g1, the default): the binary alone
# (what the README's first command builds), and with BUILD_ALL=1 then everything (what
# scripts/test adds); with ccache installed, a rebuild after `ninja -t clean` from a warm cache. Each configuration in its own build tree, one after
# another, on this machine; writes the "Build" section of docs/benchmarks.md.
# Usage: [BUILD_ALL=1] benchmarks/build.sh   (after scripts/setup)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q --no-hardlinks "$root" "$work/src"

# Seconds of wall and of CPU (user + system, children included) that "$@" took.
timed() {
  # This shell's own pid: inside $(...) below, $BASHPID would be that subshell's.
  local start=$EPOCHREALTIME self=$BASHPID before after
  before=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$self/stat")
  "$@" >/dev/null
  after=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$self/stat")
  awk -v a="$start" -v b="$EPOCHREALTIME" -v c="$before" -v d="$after" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%.0f s | %.0f s", b - a, (d - c) / hz }'
}

rows=()
export CCACHE_DISABLE=1  # the compilers' own time, even where ccache is installed
for full in ON OFF; do
  tree=$work/build-full-debug-$full
  cmake -S "$work/src" -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPREFLIGHT_FULL_DEBUG_INFO=$full \
    >/dev/null
  name=$([[ $full == ON ]] && echo "-O2 -g (before)" || echo "-O2 -g1 (now)")
  objects=$(ninja -C "$tree" -t targets all | grep -c '\.o:' || true)
  rows+=("| $name | \`preflight\` | $(timed ninja -C "$tree" preflight) |")
  if [[ -n ${BUILD_ALL:-} ]]; then
    rows+=("| $name | everything (unit tests too, $objects objects) | $(timed ninja -C "$tree") |")
  fi
done
if command -v ccache >/dev/null; then
  tree=$work/build-ccache
  unset CCACHE_DISABLE
  export CCACHE_DIR=$work/ccache
  cmake -S "$work/src" -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  rows+=("| -O2 -g1, ccache cold | \`preflight\` | $(timed ninja -C "$tree" preflight) |")
  ninja -C "$tree" -t clean >/dev/null
  rows+=("| -O2 -g1, ccache warm | \`preflight\` after \`ninja -t clean\` | $(timed ninja -C "$tree" preflight) |")
fi

section=$work/section.md
{
  echo "## Build (issue 12)"
  echo
  echo "\`benchmarks/build.sh\` on $(python3 benchmarks/section.py machine), $(date -u +%Y-%m-%d):"
  echo "a fresh clone of $(git rev-parse --short HEAD), RelWithDebInfo, Ninja's default parallelism,"
  echo "one configuration after another. CPU is user + system time of the compilers and linker."
  echo
  echo "| configuration | target | wall | CPU |"
  echo "|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
} >"$section"
python3 benchmarks/section.py write "$section"
cat "$section"
