#!/usr/bin/env bash
# The image's sealed folders bound in place of the overlay (docs/security.md "Sealed folders"):
# the platform's user (philly, uid 1000) sees /usr as a mount of the image's folder, nosuid and
# nodev, and every write there is refused as in the overlay (EACCES; EPERM for chmod); a job
# run as root (sagemaker) and a job whose code is mounted under /usr keep the overlay, and what
# the root job writes into /usr stays in its run. The python image's cached root verifies
# afterwards. As root and as an ordinary user alike.
# Usage: sealed_folders.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
require_runtime

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
name=sealed-$$
cat >"$work/probe.py" <<'EOF'
import errno, os

def tried(what, action):
    try:
        action()
        result = "done"
    except OSError as e:
        result = errno.errorcode[e.errno]
    print(f"PROBE {what} {result}", flush=True)

usr = [line.split() for line in open("/proc/self/mountinfo") if line.split()[4] == "/usr"]
print("PROBE mount", ",".join(sorted(set(usr[-1][5].split(",")) & {"rw", "nosuid", "nodev"})) if usr else "none")
tried("create", lambda: open("/usr/lib/planted.txt", "w").close())
tried("append", lambda: open("/usr/lib/os-release", "ab").close())
tried("mkdir", lambda: os.mkdir("/usr/local/planted"))
tried("chmod", lambda: os.chmod("/usr/bin/python3", 0o777))
tried("rename", lambda: os.rename("/usr/bin/python3", "/usr/bin/planted"))
EOF

probe() {  # CASE PLATFORM [PROFILE_FILE]: the probe's lines, as "WHAT RESULT" words
  local job=$work/$1 platform=$2
  mkdir -p "$job"
  cp "$work/probe.py" "$job/"
  [[ -z ${3:-} ]] || { cp "$3" "$job/profile.yaml" && platform=./profile.yaml; }
  printf 'name: %s\nplatform: %s\nimage: python\ncommand: python probe.py\n' "$name-$1" "$platform" >"$job/job.yaml"
  "$preflight" run "$job/job.yaml" >"$job/out" 2>&1
  check_equal "$1: exit status (the probe itself succeeds)" 0 "$?"
  sed -n 's/^ *| PROBE //p' "$job/out" | tr '\n' ' ' | sed 's/ $//'
}

check_equal "the platform's user: the image's /usr bound, every write refused" \
  "mount nodev,nosuid,rw create EACCES append EACCES mkdir EACCES chmod EPERM rename EACCES" \
  "$(probe user philly)"

# A job run as root could write the image's folders: it keeps the overlay, and its writes land there.
check_equal "a job run as root: the overlay, its writes its own" \
  "mount none create done append done mkdir done chmod done rename done" "$(probe root sagemaker)"

# Code mounted under /usr: runc would make its mount point in the cache; /usr stays in the overlay.
sed 's|^  code: /philly/code|  code: /usr/src/app|' "$(dirname "$0")/../../policies/platforms/philly.yaml" >"$work/under_usr.yaml"
check_equal "code under /usr: the overlay, writes refused by the image's permissions" \
  "mount none create EACCES append EACCES mkdir EACCES chmod EPERM rename EACCES" \
  "$(probe under_usr philly "$work/under_usr.yaml")"

cache=${PREFLIGHT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/preflight}
check_equal "files the jobs wrote into the cached images" "" \
  "$(find "$cache/rootfs" -mindepth 5 -maxdepth 5 -name 'planted*' 2>/dev/null)"
# The python image's root alone: reading every image in a shared cache cold takes minutes.
"$preflight" cache verify python >"$work/verify" 2>&1
check_equal "cache verify of the python image after the runs ($(tail -1 "$work/verify"))" 0 "$?"
check_contains "what cache verify read" "1 verified, 0 not verified, 0 failed" "$(cat "$work/verify")"
check_no_leftovers "$name"
finish
