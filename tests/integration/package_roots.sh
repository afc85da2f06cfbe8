#!/usr/bin/env bash
# The Debian package as a user installs it: in a fresh Debian 12 and a fresh Debian 13 root
# file system (mmdebstrap, minbase), the package goes in with apt through the GitHub Action's
# install step (scripts/action/install), and then, as root and as an ordinary user:
# `preflight --version`, `platforms`, `check` of the bundled MNIST example, and `run` of it.
# Both take the pytorch image as this machine built it (oci:, bound read-only): building it
# again in each root would take minutes, and the build is tested elsewhere. Last, `apt-get
# purge` must leave none of the package's files. A package holds its release's shared
# libraries (docs/install.md): this machine's release gets the package of the build tree under
# test; the other release, one built from the same sources by scripts/setup and
# scripts/package in a root of its own (ccache's folder for it kept in
# $PREFLIGHT_TEST_CACHE/ccache-SUITE, ~/.cache/preflight-tests by default). Each root is
# entered by scripts/enter-root: pivot_root in a mount namespace of its own.
# Needs root, mmdebstrap, cpack and the network to Debian's mirror; about a minute for this
# release, three more for the other (one more once ccache holds its build).
# Usage: package_roots.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(dirname "$preflight")
[[ $(id -u) == 0 ]] || { echo "SKIP: making and entering root file systems needs root" >&2; exit 77; }
[[ -f $build/CMakeCache.txt ]] || { echo "SKIP: $preflight is not in a CMake build tree" >&2; exit 77; }
for tool in mmdebstrap cpack dpkg-deb pivot_root git; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed" >&2; exit 77; }
done
require_runtime
layout=${PREFLIGHT_CACHE:-$HOME/.cache/preflight}/images/pytorch
[[ -f $layout/index.json ]] || { echo "SKIP: the pytorch image is not built (scripts/setup pytorch)" >&2; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$build" && cpack -G DEB -B "$work/package") >"$work/cpack.out" 2>&1
deb=$(find "$work/package" -maxdepth 1 -name 'preflight_*_*.deb' | head -1)
[[ -n $deb ]] || { fail "cpack made no package: $(tail -5 "$work/cpack.out")"; finish; }

# What runs inside a root, as root: the install, the commands as root and as `someone`, the
# purge. Its checks print "FAIL: ..." lines, read back below.
cat >"$work/inside.sh" <<'EOF'
set -u
say() { echo "== $*"; }
check() {  # WHAT COMMAND...: the command passes, its output is kept in /tmp/out
  "${@:2}" >/tmp/out 2>&1 || echo "FAIL: $1: exit $?: $(tail -5 /tmp/out)"
}
expect() {  # WHAT TEXT: the last command's output holds TEXT
  grep -qF -- "$2" /tmp/out || echo "FAIL: $1: no \"$2\" in: $(tail -5 /tmp/out)"
}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
say "install"
check "the Action's install step" env PREFLIGHT_PACKAGE=/srv/preflight.deb /srv/install
expect "the install step names the version" "installed preflight"
for who in root someone; do
  as=()
  [[ $who == root ]] || as=(env HOME=/home/someone runuser -u someone --)
  say "as $who"
  check "$who: --version" "${as[@]}" preflight --version
  expect "$who: --version" "preflight 0."
  check "$who: platforms" "${as[@]}" preflight platforms
  expect "$who: platforms" "philly"
  check "$who: check" "${as[@]}" sh -c 'cd /srv/mnist && preflight check --image oci:/srv/pytorch job.yaml'
  expect "$who: check" "verdict: PASS"
  check "$who: run" "${as[@]}" preflight run -q --image oci:/srv/pytorch /srv/mnist/job.yaml
  expect "$who: run" "verdict: PASS"
done
say "purge"
check "apt-get purge" apt-get purge -y -qq preflight
for path in /usr/bin/preflight /usr/share/preflight /usr/share/man/man1/preflight.1.gz \
  /usr/share/bash-completion/completions/preflight /usr/share/doc/preflight; do
  [[ -e $path ]] && echo "FAIL: purge left $path"
done
dpkg -s preflight >/dev/null 2>&1 && echo "FAIL: dpkg still knows preflight"
true
EOF

# The package for SUITE: the build tree's for this machine's release, else one built in a root
# of that release from the sources under test.
package_for() {  # SUITE
  local suite=$1 builder=$work/build-$1 cache
  if [[ $suite == "$(. /etc/os-release && echo "$VERSION_CODENAME")" ]]; then
    echo "$deb"
    return
  fi
  cache=${PREFLIGHT_TEST_CACHE:-$HOME/.cache/preflight-tests}/ccache-$suite
  mkdir -p "$cache"
  mmdebstrap --quiet --variant=minbase --include=ca-certificates "$suite" "$builder" >"$work/$suite-build.out" 2>&1 ||
    { fail "$suite: mmdebstrap of the build root failed: $(tail -5 "$work/$suite-build.out")"; return; }
  mkdir -p "$builder/root/preflight"
  (cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) |
    tar -xf - -C "$builder/root/preflight"
  "$root/scripts/enter-root" "$builder" --bind-rw "$cache:/root/.cache/ccache" bash -c '
    export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
    cd /root/preflight && scripts/setup && scripts/package' >"$work/$suite-build.out" 2>&1 ||
    { fail "$suite: the package's build failed: $(tail -5 "$work/$suite-build.out")"; return; }
  find "$builder/root/preflight/build/package" -maxdepth 1 -name 'preflight_*+deb*_amd64.deb' | head -1
}

for suite in bookworm trixie; do
  package=$(package_for "$suite")
  [[ -n $package ]] || continue
  check_contains "$suite: the package is its release's" "+deb$([[ $suite == bookworm ]] && echo 12 || echo 13)_" \
    "$(basename "$package")"
  fresh=$work/$suite
  if ! mmdebstrap --quiet --variant=minbase --include=ca-certificates "$suite" "$fresh" >"$work/$suite.out" 2>&1; then
    fail "$suite: mmdebstrap failed: $(tail -5 "$work/$suite.out")"
    continue
  fi
  cp "$package" "$fresh/srv/preflight.deb"
  cp "$root/scripts/action/install" "$fresh/srv/install"
  cp -r "$root/examples/mnist" "$fresh/srv/mnist"
  cp "$work/inside.sh" "$fresh/srv/inside.sh"
  chroot "$fresh" useradd --create-home someone
  echo "someone:100000:65536" >>"$fresh/etc/subuid"
  echo "someone:100000:65536" >>"$fresh/etc/subgid"
  "$root/scripts/enter-root" "$fresh" --bind "$layout:/srv/pytorch" bash /srv/inside.sh >"$work/$suite.log" 2>&1
  grep -E '^(== |FAIL: )' "$work/$suite.log" | sed "s/^/$suite: /" >&2
  while IFS= read -r line; do fail "$suite: ${line#FAIL: }"; done < <(grep '^FAIL: ' "$work/$suite.log")
  grep -q '^== purge' "$work/$suite.log" || fail "$suite: the steps did not all run: $(tail -5 "$work/$suite.log")"
done
finish
