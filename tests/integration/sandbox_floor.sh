#!/usr/bin/env bash
# The sandbox's floor (docs/security.md "The sandbox floor"): a profile the job names with
# `network: true` and `seccomp: unconfined` lowers nothing. The job cannot reach a server on
# the host's 127.0.0.1, and unshare(CLONE_NEWUSER), keyctl, io_uring_setup, chroot and
# socket(AF_VSOCK) fail as under Docker; the report says what the dry run did not emulate.
# Only the user's --network and --seccomp unconfined lower it, each with a note. (The static
# checks' container makes its own plan, with no network and the floor's policy whatever the
# flags: integration.hostile_image.)
# Usage: sandbox_floor.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$(realpath "$1")
require_runtime
here=$(cd "$(dirname "$0")/../.." && pwd)

work=$(mktemp -d)
server=
trap '[[ -n $server ]] && kill "$server"; rm -rf "$work"' EXIT
chmod 711 "$work"

# A server on the host's loopback only, as a CI runner's metadata or cache service would be.
mkdir "$work/site"
echo "host-only-secret" >"$work/site/secret"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$work/site" "$port" >/dev/null 2>&1 &
server=$!
for _ in $(seq 50); do
  python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/secret', timeout=1)" 2>/dev/null && break
  sleep 0.1
done

job=$work/job
mkdir "$job"
cp "$here/tests/jobs/seccomp_selftest_default/selftest.py" "$job/"
cp "$here/tests/jobs/seccomp_floor_profile/open-node.yaml" "$job/"
# Exits 0 when the server answered as EXPECTED says (reached or unreachable), 1 otherwise.
cat >"$job/reach.py" <<'EOF'
import sys
import urllib.request

port, expected = sys.argv[1], sys.argv[2]
try:
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/secret", timeout=3).read().decode()
    outcome = "reached" if "host-only-secret" in body else "unreachable"
except OSError as error:
    body, outcome = str(error), "unreachable"
print(f"host's 127.0.0.1:{port}: {outcome} ({body.strip()})")
sys.exit(0 if outcome == expected else 1)
EOF
write_job() {  # NAME EXPECTED_REACH POLICY
  printf 'name: %s\nplatform: ./open-node.yaml\nimage: python\ncommand: python reach.py %s %s && python selftest.py --policy %s\n' \
    "$1" "$port" "$2" "$3" >"$job/$1.yaml"
}

# The profile asks for network and unconfined; the run keeps the floor.
write_job floor-kept unreachable default
"$preflight" run --json "$work/kept.json" --timeout 120s "$job/floor-kept.yaml" >"$work/kept.out" 2>&1
status=$?
check_equal "profile asks: exit status (host unreachable, calls refused)" 0 "$status"
[[ $status == 0 ]] || tail -20 "$work/kept.out" >&2
notes=$(jq -r '.notes[]' "$work/kept.json" 2>/dev/null)
check_contains "profile asks: network note" "open-node.yaml:6:10: open-node's nodes have network; the dry run has none: pass --network to grant it" "$notes"
check_contains "profile asks: seccomp note" "open-node.yaml:7:10: open-node runs its jobs under seccomp policy \"unconfined\"" "$notes"
for call in "socket(AF_VSOCK)" "chroot" "keyctl(KEYCTL_GET_KEYRING_ID)" "io_uring_setup" "unshare(CLONE_NEWUSER)"; do
  check_contains "profile asks: $call" "$call: refused, EPERM" "$(cat "$work/kept.out")"
done
check_contains "profile asks: the host unreachable" "host's 127.0.0.1:$port: unreachable" "$(cat "$work/kept.out")"
check_no_leftovers floor-kept

# The user lowers it on the command line: the host's loopback answers, the calls reach the kernel.
write_job floor-lowered reached unconfined
"$preflight" run --json "$work/lowered.json" --timeout 120s --network --seccomp unconfined \
  "$job/floor-lowered.yaml" >"$work/lowered.out" 2>&1
status=$?
check_equal "--network --seccomp unconfined: exit status (host reached, calls allowed)" 0 "$status"
[[ $status == 0 ]] || tail -20 "$work/lowered.out" >&2
notes=$(jq -r '.notes[]' "$work/lowered.json" 2>/dev/null)
check_contains "--network: note" "the job had the host's network (--network)" "$notes"
check_contains "--seccomp: note" "the job ran under seccomp policy \"unconfined\" (--seccomp unconfined" "$notes"
check_equal "--network: no note that the dry run has none" "" "$(grep -o 'pass --network' <<<"$notes")"
check_contains "--network: the job reached the host" "host's 127.0.0.1:$port: reached" "$(cat "$work/lowered.out")"
check_no_leftovers floor-lowered

# batch passes both on to each run.
"$preflight" batch -q --reports "$work/batch" --network --seccomp unconfined "$job/floor-lowered.yaml" \
  >"$work/batch.out" 2>&1
check_equal "batch --network --seccomp unconfined: exit status" 0 "$?"
check_contains "batch: the run's note" "(--seccomp unconfined" "$(jq -r '.notes[]' "$work"/batch/*.json 2>/dev/null)"

# A name that is not a shipped policy is bad usage, before anything runs.
"$preflight" run --seccomp ../x "$job/floor-kept.yaml" >"$work/bad.out" 2>&1
check_equal "--seccomp ../x: exit status" 2 "$?"
check_contains "--seccomp ../x: message" "--seccomp: unknown seccomp policy \"../x\"" "$(cat "$work/bad.out")"
"$preflight" batch --seccomp ../x "$job/floor-kept.yaml" >"$work/bad.out" 2>&1
check_equal "batch --seccomp ../x: exit status" 2 "$?"

finish
