#!/usr/bin/env bash
# Preflight as a package installs it (docs/install.md), from the build tree of the binary
# under test:
# - `cmake --install` into a prefix lays out bin/, share/preflight/, the completions, the man
#   page and the doc folder, and the installed binary reads its policies from
#   PREFIX/share/preflight (a profile's description edited there shows in `platforms`), not
#   from the source tree, and checks a bundled example with them;
# - preflight(1) holds every subcommand's help, nested ones too; bash loads the completion;
# - the Debian package (CPack, as scripts/package makes it) installs the same files under
#   /usr, Depends on runc, uidmap, mmdebstrap and skopeo and on none of the tests' tools,
#   and lintian reports no error on it (where dpkg-deb and lintian are installed).
# Skipped for a user who may not write the build tree (the rootless suite's).
# Usage: install.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(dirname "$preflight")
[[ -f $build/CMakeCache.txt ]] || { echo "SKIP: $preflight is not in a CMake build tree" >&2; exit 77; }
# cmake --install writes its manifest into the build tree: the rootless suite's user may not.
[[ -w $build ]] || { echo "SKIP: the build tree $build is not this user's to write (cmake --install's manifest)" >&2; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.out" 2>&1
check_equal "cmake --install: exit status" 0 "$?"
for file in bin/preflight share/preflight/policies/platforms/philly.yaml share/preflight/images/pytorch.yaml \
  share/preflight/emulator/launch.sh share/preflight/emulator/site/sitecustomize.py \
  share/bash-completion/completions/preflight share/zsh/vendor-completions/_preflight \
  share/fish/vendor_completions.d/preflight.fish share/man/man1/preflight.1.gz \
  share/doc/preflight/copyright share/doc/preflight/changelog.Debian.gz; do
  [[ -f $prefix/$file ]] || fail "not installed: $file"
done
check_equal "no bytecode installed" "" "$(find "$prefix/share/preflight" -name __pycache__)"

# The installed binary's data is its own: an edit there shows, and the source tree is not read.
sed -i 's/^  Microsoft Philly (ICSE 2020)/  Edited in the installed copy. Philly/' \
  "$prefix/share/preflight/policies/platforms/philly.yaml"
check_contains "platforms: the installed profiles" "Edited in the installed copy." \
  "$(env -u PREFLIGHT_DATA_DIR "$prefix/bin/preflight" platforms 2>&1)"
check_contains "PREFLIGHT_DATA_DIR still wins" "Microsoft Philly" \
  "$(PREFLIGHT_DATA_DIR=$root "$prefix/bin/preflight" platforms 2>&1)"
(cd "$root/examples/mnist" && env -u PREFLIGHT_DATA_DIR "$prefix/bin/preflight" check job.yaml) >"$work/check.out" 2>&1
check_equal "check of a bundled example: exit status" 0 "$?"
check_contains "check of a bundled example: verdict" "verdict: PASS" "$(cat "$work/check.out")"

# preflight(1): each subcommand's help, nested ones too; valid roff where man is installed.
page=$(gzip -dc "$prefix/share/man/man1/preflight.1.gz")
for section in run check "image build" "image check" "cache prune" "export k8s" completion; do
  check_contains "man page: $section" ".SS $section" "$page"
done
if command -v man >/dev/null; then
  check_contains "man renders the page" "preflight - run a deep-learning job" \
    "$(MANWIDTH=200 man -l "$prefix/share/man/man1/preflight.1.gz" 2>&1)"
fi
check_contains "bash loads the completion" "complete -F" \
  "$(bash -c "source '$prefix/share/bash-completion/completions/preflight' && complete -p preflight" 2>&1)"

# The Debian package.
if ! command -v dpkg-deb >/dev/null || ! command -v cpack >/dev/null; then
  echo "SKIP: dpkg-deb or cpack is not installed" >&2
  finish
fi
(cd "$build" && cpack -G DEB -B "$work/package") >"$work/cpack.out" 2>&1
check_equal "cpack: exit status" 0 "$?"
deb=$(find "$work/package" -maxdepth 1 -name 'preflight_*_*.deb' | head -1)
if [[ -z $deb ]]; then
  fail "cpack made no package: $(tail -5 "$work/cpack.out")"
  finish
fi
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for file in ./usr/bin/preflight ./usr/share/preflight/policies/rules/failures.yaml \
  ./usr/share/man/man1/preflight.1.gz ./usr/share/doc/preflight/copyright; do
  check_contains "package holds $file" "$file" "$contents"
done
depends=$(dpkg-deb -f "$deb" Depends)
for package in runc uidmap mmdebstrap skopeo libarchive13 libfmt; do
  check_contains "Depends: $package" "$package" "$depends"
done
# yaml-cpp, RE2, Boost.Filesystem and OpenSSL's SHA-256 are linked in from their archives (CMakeLists.txt).
for library in libyaml-cpp libre2 libboost-filesystem libssl; do
  [[ $depends == *"$library"* ]] && fail "Depends names $library, which the binary holds: $depends"
done
for tool in chromium slurm podman nodejs munge clang; do
  [[ $depends == *"$tool"* ]] && fail "Depends names a test tool, $tool: $depends"
done
if command -v lintian >/dev/null; then
  lintian --no-tag-display-limit "$deb" >"$work/lintian.out" 2>&1
  check_equal "lintian: no error" "" "$(grep '^E: ' "$work/lintian.out")"
fi
finish
