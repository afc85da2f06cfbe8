#!/usr/bin/env bash
# An image built into Podman's store runs with no export step (issue 16): `podman import` of a
# root file system (the built-in python image's layer) into a store of the test's own, then
# `preflight run` with --image containers-storage:NAME, with the plain NAME (tried against the
# local stores, under localhost/ as Podman names it), and from a PyTorchJob whose container
# names it. Each resolves to the store's image, copied once into the cache by its manifest
# digest: the second run copies nothing. A name no store has is bad input at the line that
# names it. The store and the image are removed at the end.
# Usage: local_store.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
require_runtime
for tool in podman skopeo jq; do
  command -v $tool >/dev/null || { echo "SKIP: $tool is not installed (apt-get install $tool)" >&2; exit 77; }
done

base=${PREFLIGHT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/preflight}/images/python
[[ -f $base/index.json ]] || { echo "SKIP: the python image is not built (scripts/setup python)" >&2; exit 77; }
manifest=$(jq -r '.manifests[0].digest' "$base/index.json")
layer=$base/blobs/sha256/$(jq -r '.layers[0].digest' "$base/blobs/sha256/${manifest#sha256:}" | cut -d: -f2)
[[ -f $layer ]] || fail "no layer at $layer"

work=$(mktemp -d)
# Podman's store of the test's own, which skopeo (started by Preflight) reads through the
# same configuration: the machine's store is never touched. Rootless Podman takes
# rootless_storage_path where root takes graphroot; without root, Preflight's skopeo runs in
# Preflight's user namespace as its root, so both name the same folder.
export CONTAINERS_STORAGE_CONF=$work/storage.conf
cat >"$CONTAINERS_STORAGE_CONF" <<EOF
[storage]
driver = "vfs"
graphroot = "$work/graph"
rootless_storage_path = "$work/graph"
runroot = "$work/run"
EOF
cleanup() {
  podman rmi -f localhost/preflight-test/train:1 >/dev/null 2>&1
  # Without root, the job's files belong to the user's subordinate ids: removed from inside them.
  if [[ $(id -u) != 0 ]]; then podman unshare rm -rf "$work" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
export PREFLIGHT_CACHE=$work/cache

podman import --quiet --change 'ENV TEAM_IMAGE=train-1' "$layer" preflight-test/train:1 >"$work/import" 2>&1 ||
  fail "podman import failed: $(tail -3 "$work/import")"
podman images --format '{{.Repository}}:{{.Tag}}' | grep -qx 'localhost/preflight-test/train:1' ||
  fail "podman has no localhost/preflight-test/train:1: $(podman images 2>&1)"

mkdir -p "$work/job"
cat >"$work/job/train.py" <<'EOF'
import json
import os
import sys

print("python", sys.version.split()[0], "image", os.environ.get("TEAM_IMAGE"))
with open(os.path.join(sys.argv[1], "summary.json"), "w") as f:
    json.dump({"ok": True}, f)
EOF
cat >"$work/job/job.yaml" <<'EOF'
platform: philly
command: python train.py ${{outputs.out}}
outputs:
  out: {}
EOF

run() {  # NAME ARGS...: a run whose report is $work/NAME.json, its error output $work/NAME.err
  local name=$1
  shift
  "$preflight" run "$@" --json "$work/$name.json" >"$work/$name.out" 2>"$work/$name.err"
}

run store "$work/job/job.yaml" --image containers-storage:preflight-test/train:1
check_equal "exit with containers-storage:" 0 $?
check_equal "verdict" pass "$(jq -r .verdict "$work/store.json")"
check_equal "image" containers-storage:preflight-test/train:1 "$(jq -r .image.ref "$work/store.json")"
check_contains "the copy" "copying localhost/preflight-test/train:1 from containers-storage" "$(cat "$work/store.err")"
check_contains "the image's variables" "image train-1" "$(cat "$work/store.err")"
check_equal "layouts in the cache" 1 "$(find "$work/cache/local" -mindepth 1 -maxdepth 1 | wc -l)"

# The plain name, as a job file writes it: the same image, found in Podman's store, not copied again.
run named "$work/job/job.yaml" --image preflight-test/train:1
check_equal "exit with a plain name" 0 $?
check_equal "the same image" "$(jq -r .image.digest "$work/store.json")" "$(jq -r .image.digest "$work/named.json")"
check_equal "copies on the second resolve" "" "$(grep copying "$work/named.err")"
check_equal "layouts in the cache" 1 "$(find "$work/cache/local" -mindepth 1 -maxdepth 1 | wc -l)"

# A PyTorchJob whose container names the image.
cat >"$work/job/pytorchjob.yaml" <<'EOF'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: store-image
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers:
            - name: pytorch
              image: preflight-test/train:1
              command: [python, /app/train.py, /out]
              volumeMounts: [{name: out, mountPath: /out}]
          volumes: [{name: out, emptyDir: {}}]
EOF
(cd "$work/job" && run pytorchjob pytorchjob.yaml)
check_equal "exit of the PyTorchJob" 0 $?
check_equal "its verdict" pass "$(jq -r .verdict "$work/pytorchjob.json")"
check_equal "its image" "$(jq -r .image.digest "$work/store.json")" "$(jq -r .image.digest "$work/pytorchjob.json")"

# A name no store has: bad input, at the line of the job file that names it.
sed -i 's|image: preflight-test/train:1|image: preflight-test/missing:1|' "$work/job/pytorchjob.yaml"
(cd "$work/job" && run missing pytorchjob.yaml)
check_equal "exit for a missing image" 2 $?
check_contains "the message" "pytorchjob.yaml:12:22: image preflight-test/missing:1 is not a built-in image, and neither Podman's store" "$(cat "$work/missing.err")"
run missing_store "$work/job/job.yaml" --image containers-storage:preflight-test/missing:1
check_equal "exit for a store without it" 2 $?
check_contains "its message" "Podman's store (containers-storage) has no image preflight-test/missing:1" "$(cat "$work/missing_store.err")"

check_no_leftovers store-image
finish
