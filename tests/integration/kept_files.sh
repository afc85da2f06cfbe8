#!/usr/bin/env bash
# Nothing privileged leaves the sandbox (docs/security.md "job's files → the host's users"): a
# job that runs as root (SageMaker's uid 0) copies a shell into its output and into a kept
# folder, makes it set-user-ID and set-group-ID, makes a set-group-ID sticky folder, a FIFO
# and a socket, and tries a device node. After the run nothing under its run folder is
# set-user-ID, set-group-ID, a device, a FIFO or a socket, and the run folder is 0700 and
# the user's own. As root and as an ordinary user alike.
# Usage: kept_files.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
require_runtime

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
job=$work/job
mkdir -p "$job"
name=kept-files-$$
cat >"$job/job.yaml" <<EOF
name: $name
platform: sagemaker
image: python
command: sh plant.sh \${{outputs.o}}
outputs:
  o: {}
EOF
cat >"$job/plant.sh" <<'EOF'
set -e
for dir in "$1" /opt/ml/model; do
  cp /bin/sh "$dir/rootsh" && chmod 4755 "$dir/rootsh"
  cp /bin/sh "$dir/groupsh" && chmod 2755 "$dir/groupsh"
  mkdir "$dir/shared" && chmod 3777 "$dir/shared"
  mkfifo "$dir/fifo"
  python -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$dir/socket"
  mknod "$dir/null" c 1 3 2>/dev/null || true  # refused without CAP_MKNOD; looked for all the same
done
# What the job saw: the bits were set, as the job's own.
stat -c '%A %u' "$1/rootsh" "$1/groupsh" "$1/shared" >"$1/seen"
EOF

cache=${PREFLIGHT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/preflight}
"$preflight" run -q --json "$work/report.json" "$job/job.yaml" >"$work/out" 2>&1
check_equal "exit status (the job itself succeeds)" 0 "$?"
run_dir=$(find "$cache/runs" -mindepth 1 -maxdepth 1 -name "$name-*" | head -1)
[[ -n $run_dir ]] || { fail "no run folder $cache/runs/$name-*: $(cat "$work/out")"; finish; }

check_equal "what the job made inside" "-rwsr-xr-x 0 -rwxr-sr-x 0 drwxrwsrwt 0" \
  "$(tr '\n' ' ' <"$run_dir/outputs/o/seen" | sed 's/ $//')"
check_equal "the run folder's mode and owner" "700 $(id -u)" "$(stat -c '%a %u' "$run_dir")"
check_equal "set-user-ID or set-group-ID files kept" "" "$(find "$run_dir" -perm /6000)"
check_equal "devices, FIFOs or sockets kept" "" "$(find "$run_dir" \( -type b -o -type c -o -type p -o -type s \))"
check_equal "sticky files kept" "" "$(find "$run_dir" ! -type d -perm -1000)"
check_equal "the shell is kept, disarmed" "755" "$(stat -c '%a' "$run_dir/outputs/o/rootsh")"
check_equal "the kept folder's shell too" "755" "$(stat -c '%a' "$run_dir/kept/opt/ml/model/rootsh")"
check_no_leftovers "$name"
rm -rf "$run_dir"
finish
