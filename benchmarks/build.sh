#!/usr/bin/env bash
# How long Preflight takes to build from a fresh clone of HEAD, one source at a time
# (PREFLIGHT_UNITY_BUILD=OFF) and as unity builds by folder (the default): the binary alone
# (what the README's first command builds), and with BUILD_ALL=1 then everything (what
# scripts/test adds); with ccache installed, the default cold and, after `ninja -t clean`,
# warm. Then the README's first command as a new user runs it: a fresh clone, no ccache, an
# empty image cache. Each configuration in its own build tree, one after another, on this
# machine; writes the "Build" section of docs/benchmarks.md.
# Usage: [BUILD_ALL=1] benchmarks/build.sh   (after scripts/setup, on an otherwise idle machine)
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
for unity in OFF ON; do
  tree=$work/build-unity-$unity
  cmake -S "$work/src" -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPREFLIGHT_UNITY_BUILD=$unity \
    >/dev/null
  name=$([[ $unity == OFF ]] && echo "one source at a time (before)" || echo "unity by folder (now)")
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
  rows+=("| unity, ccache cold | \`preflight\` | $(timed ninja -C "$tree" preflight) |")
  ninja -C "$tree" -t clean >/dev/null
  rows+=("| unity, ccache warm | \`preflight\` after \`ninja -t clean\` | $(timed ninja -C "$tree" preflight) |")
  export CCACHE_DISABLE=1
fi

# The README's first command in a fresh clone: the packages are installed already (apt is not
# measurable here), npm fetches the test tools, the binary builds without a cache, the default
# image is built into an empty cache, and the bundled job dry-runs.
git clone -q --no-hardlinks "$root" "$work/first"
first_command() (
  cd "$work/first"
  export PREFLIGHT_CACHE=$work/image-cache
  scripts/setup pytorch
  build/preflight run -q examples/mnist/job.yaml
)
rows+=("| the README's first command, fresh clone, empty image cache | setup, \`pytorch\` image, dry run | $(timed first_command) |")

section=$work/section.md
{
  echo "## Build (issue 12)"
  echo
  echo "\`benchmarks/build.sh\` on $(python3 benchmarks/section.py machine), $(date -u +%Y-%m-%d):"
  echo "a fresh clone of $(git rev-parse --short HEAD), RelWithDebInfo (-O2 -g1), Ninja's default"
  echo "parallelism, one configuration after another. CPU is user + system time of the compilers,"
  echo "linker and tools."
  echo
  echo "| configuration | target | wall | CPU |"
  echo "|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
} >"$section"
python3 benchmarks/section.py write "$section"
cat "$section"
