#!/usr/bin/env bash
# A job file chooses nothing on the host (docs/security.md "Host paths and registries"): the
# host files, profile files and images it names must lie in its own folder tree, a registry
# image's registry must be one the user allows and never this machine's own address, and a
# cloud path or a Kubernetes subPath may not climb out of its local copy. Each reproduction of
# issue 30 is refused with exit 2 at the line that names it, and nothing of the file it points
# at reaches the output; what the user grants with --allow or $PREFLIGHT_ALLOW runs.
# As root and, in CI's second pass, as an ordinary user (its own 0600 key is the secret then).
# Usage: host_grant.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
require_runtime

work=$(mktemp -d)
trap 'rm -rf "$work"; [[ $(id -u) == 0 ]] || rm -f "$secret"; [[ -n ${server:-} ]] && kill "$server" 2>/dev/null' EXIT
# The secret: a file only its owner may read, outside the job's tree (an SSH key without root).
if [[ $(id -u) == 0 ]]; then
  secret=$work/host/secret
else
  secret=$HOME/.ssh/preflight_test_key
fi
mkdir -p "$(dirname "$secret")" "$work/repo/.git" "$work/repo/job/data"
printf 'TOPSECRET: value\n' >"$secret"
chmod 600 "$secret"
printf 'x,y\n' >"$work/repo/job/data/train.csv"
job=$work/repo/job

refused() {  # WHAT LINE NEEDLE FILE [ARGS...]: `preflight check` refuses FILE at LINE, saying NEEDLE
  local what=$1 line=$2 needle=$3 file=$4
  shift 4
  local out status
  out=$("$preflight" check "$@" "$file" 2>&1)
  status=$?
  check_equal "$what: exit status" 2 "$status"
  check_contains "$what: located" "$(basename "$file"):$line:" "$out"
  check_contains "$what: message" "$needle" "$out"
  check_equal "$what: nothing of the secret" "" "$(grep -o 'TOPSECRET' <<<"$out")"
}

# 1. Host files by name: a root-only file (or the user's key), /etc/shadow, the host's root as
# the image, a profile that is a link to the secret.
printf 'platform: sagemaker\nimage: python\ncommand: cat /opt/ml/input/data/k\ninputs:\n  k: %s\n' \
  "$secret" >"$job/job.yaml"
refused "input outside the tree" 5 "is outside the job's folder tree $work/repo" "$job/job.yaml"
printf 'platform: sagemaker\nimage: python\ncommand: cat /opt/ml/input/data/sh\ninputs: {sh: /etc/shadow}\n' \
  >"$job/shadow.yaml"
refused "/etc/shadow" 4 "run with --allow /etc" "$job/shadow.yaml"
printf 'image: rootfs:/\ncommand: ls\n' >"$job/rootfs.yaml"
refused "the host's root as the image" 1 "image: / is outside" "$job/rootfs.yaml"
ln -s "$secret" "$job/tok.yaml"
printf 'platform: ./tok.yaml\ncommand: ls\n' >"$job/token.yaml"
refused "a profile linked outside" 1 "after its links) is outside" "$job/token.yaml"
printf 'command: ls\npaths: {"s3://bucket": ./data}\ninputs: {d: "s3://bucket/../../../../etc"}\n' \
  >"$job/climb.yaml"
refused "a cloud path that climbs" 3 'has a ".." component' "$job/climb.yaml"
cat >"$job/pytorchjob.yaml" <<'EOF'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: escape}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          volumes: [{name: data, persistentVolumeClaim: {claimName: c}}]
          containers:
            - name: pytorch
              image: python
              command: [ls, /data]
              volumeMounts: [{name: data, mountPath: /data, subPath: "../../../../../../etc"}]
EOF
refused "a subPath that climbs" 15 "Kubernetes refuses" "$job/pytorchjob.yaml" --map "pvc://c=$job/data" --code "$job"

# 3. A registry on this machine's loopback: refused before anything connects to it.
port_file=$work/port
python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
conn, _ = s.accept(); open(sys.argv[1] + ".hit", "w").write("connected")
' "$port_file" &
server=$!
for _ in $(seq 50); do [[ -s $port_file ]] && break; sleep 0.1; done
printf 'image: docker://127.0.0.1:%s/x:1\ncommand: ls\n' "$(cat "$port_file")" >"$job/registry.yaml"
refused "a loopback registry" 1 "an address of this machine or its link" "$job/registry.yaml" \
  --allow-registry "127.0.0.1:$(cat "$port_file")"
printf 'image: docker://registry.example.com/team/x:1\ncommand: ls\n' >"$job/remote.yaml"
refused "a registry the user did not allow" 1 "--allow-registry registry.example.com" "$job/remote.yaml"
sleep 0.2
check_equal "nothing connected to the loopback server" "" "$(cat "$port_file.hit" 2>/dev/null)"

# What the user grants runs: a readable file outside the tree, by --allow and by $PREFLIGHT_ALLOW.
mkdir -p "$work/shared"
printf 'granted data\n' >"$work/shared/notes.txt"
chmod -R a+rX "$work/shared"
# shellcheck disable=SC2016 # ${{inputs.n}} is job.yaml's, not the shell's
printf 'name: granted\nimage: python\ncommand: cat ${{inputs.n}}\ninputs: {n: %s}\n' "$work/shared/notes.txt" \
  >"$job/granted.yaml"
refused "not granted" 4 "--allow $work/shared" "$job/granted.yaml"
out=$("$preflight" run -q --allow "$work/shared" "$job/granted.yaml" 2>&1)
check_equal "granted with --allow: exit status" 0 "$?"
out=$(PREFLIGHT_ALLOW="/nonexistent:$work/shared" "$preflight" check "$job/granted.yaml" 2>&1)
check_equal "granted by \$PREFLIGHT_ALLOW: exit status" 0 "$?"
check_no_leftovers granted
finish
