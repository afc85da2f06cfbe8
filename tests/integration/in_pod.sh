#!/usr/bin/env bash
# `preflight run --in-pod` in a stand-in for a Kubernetes pod: a runc container of the job's
# image (the built-in pytorch image's cached root under an overlay of the test's own, mounted
# read-only), running as the platform's user (philly's, uid 1000), with no network, an
# emptyDir (a tmpfs) at each of the platform's places, the preflight binary with its own
# loader and libraries (as a pod gets it: it need not run on the image's C library), the jobs
# read-only at their paths, and a folder for the reports. Each job's verdict, first error
# category and stage equal its run in preflight's own container.
# Controls: --in-pod outside a pod is refused (exit 2); a pod running as another user is
# refused (exit 2, naming runAsUser); a pod without a folder the platform gives the job stops
# the run (exit 3, naming the folder and emptyDir).
# Usage: in_pod.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v jq >/dev/null || { echo "SKIP: jq is not installed" >&2; exit 77; }
require_runtime
if [[ $(id -u) != 0 ]]; then
  echo "SKIP: the stand-in pod is an overlay over the image's cached root, which only root may mount" >&2
  exit 77
fi

work=$(mktemp -d)
pods=()
cleanup() {
  local pod
  for pod in "${pods[@]}"; do
    runc delete --force "$pod" >/dev/null 2>&1
    umount "$work/$pod/root" 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1

# Outside a pod, --in-pod is refused before it touches anything.
env -u KUBERNETES_SERVICE_HOST -u PREFLIGHT_IN_POD "$preflight" run "$root/examples/mnist/job.yaml" --in-pod \
  >/dev/null 2>outside.err
check_equal "--in-pod outside a pod: exit" 2 $?
check_contains "--in-pod outside a pod: message" "not a Kubernetes pod" "$(cat outside.err)"

# The binary as a pod gets it: with the loader and the libraries it was linked with.
mkdir -p bundle/bin bundle/lib bundle/data reports
cp "$preflight" bundle/bin/preflight
ldd "$preflight" | awk '$2 == "=>" { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }' | while read -r lib; do
  cp -L "$lib" bundle/lib/
done
loader=$(find bundle/lib -name 'ld-linux*' -printf '%f\n' | head -1)
[[ -n $loader ]] || { fail "no loader in ldd's list for $preflight"; finish; }
cp -r "$root/policies" "$root/emulator" bundle/data/
chmod 777 reports

# Runs JOB in a new stand-in pod as UID with an emptyDir at each of FOLDERS; its report is
# reports/NAME.json. The image is the one of the job's local run ($digest). The pod's exit status.
run_in_pod() {  # NAME JOB UID FOLDERS...
  local name=$1 job=$2 uid=$3
  shift 3
  local pod=pod-$name-$$ rootfs
  pods+=("$pod")
  rootfs=${PREFLIGHT_CACHE:-$HOME/.cache/preflight}/rootfs/${digest/:/-}/rootfs
  mkdir -p "$pod/root" "$pod/upper" "$pod/work"
  # The emptyDirs' mount points, made in the overlay's own layer: the cached root is never written.
  local folder
  for folder in "$@" /preflight /reports "$root"; do
    mkdir -p "$pod/upper$folder"
    chmod 1777 "$pod/upper$folder"
  done
  mount -t overlay overlay -o "lowerdir=$rootfs,upperdir=$work/$pod/upper,workdir=$work/$pod/work" "$pod/root" ||
    { fail "$name: cannot mount the pod's root"; return 125; }
  local volumes
  volumes=$(printf '%s\n' "$@" | jq -R '{destination: ., type: "tmpfs", source: "tmpfs",
    options: ["nosuid", "nodev", "mode=1777"]}' | jq -s .)
  jq -n --arg root "$work/$pod/root" --argjson uid "$uid" --arg job "$job" --arg report "/reports/$name.json" \
    --arg loader "/preflight/lib/$loader" --arg bundle "$work/bundle" --arg reports "$work/reports" \
    --arg repo "$root" --argjson volumes "$volumes" '{
    ociVersion: "1.0.2",
    root: {path: $root, readonly: true},
    hostname: "pod",
    process: {
      user: {uid: $uid, gid: $uid}, cwd: "/", terminal: false, noNewPrivileges: true,
      args: [$loader, "--library-path", "/preflight/lib", "/preflight/bin/preflight", "run", $job, "--in-pod",
             "-q", "--json", $report],
      env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "PREFLIGHT_IN_POD=1",
            "PREFLIGHT_DATA_DIR=/preflight/data", "PREFLIGHT_CACHE=/tmp/preflight", "HOME=/tmp"],
      capabilities: {bounding: [], effective: [], permitted: []}},
    mounts: ([
      {destination: "/proc", type: "proc", source: "proc"},
      {destination: "/dev", type: "tmpfs", source: "tmpfs", options: ["nosuid", "mode=755"]},
      {destination: "/dev/pts", type: "devpts", source: "devpts", options: ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
      {destination: "/dev/shm", type: "tmpfs", source: "shm", options: ["nosuid", "noexec", "nodev", "mode=1777"]},
      {destination: "/sys", type: "sysfs", source: "sysfs", options: ["nosuid", "noexec", "nodev", "ro"]},
      {destination: "/preflight", type: "bind", source: $bundle, options: ["rbind", "ro"]},
      {destination: $repo, type: "bind", source: $repo, options: ["rbind", "ro"]},
      {destination: "/reports", type: "bind", source: $reports, options: ["rbind", "rw"]}] + $volumes),
    linux: {namespaces: [{type: "pid"}, {type: "ipc"}, {type: "uts"}, {type: "mount"}, {type: "network"}],
            maskedPaths: ["/proc/kcore", "/proc/keys"], readonlyPaths: ["/proc/sys", "/proc/sysrq-trigger"]}
  }' >"$pod/config.json"
  timeout 300 runc run --bundle "$pod" "$pod" >"$name.pod.out" 2>&1 </dev/null
}

# The verdict, and the first error's category and stage, of a report.
outcome() {  # REPORT
  jq -c '[.verdict, ([.findings[] | select(.severity == "error")][0] // {} | [.category, .stage])]' "$1" 2>/dev/null
}

# philly's places: its code, inputs, outputs and scratch, its writable folders, the harness's.
philly=(/philly /hdfs /tmp /home/job /opt/preflight)
jobs=("$root/examples/mnist" "$root/tests/jobs/path_laptop_dataset" "$root/tests/jobs/permission_write_into_input"
  "$root/tests/jobs/platform_philly_writes_outputs_folder")
for job in "${jobs[@]}"; do
  name=$(basename "$job")
  "$preflight" run -q "$job/job.yaml" --platform philly --json "local-$name.json" >/dev/null 2>&1
  local_exit=$?
  digest=$(jq -r .image.digest "local-$name.json")
  run_in_pod "$name" "$job/job.yaml" 1000 "${philly[@]}"
  pod_exit=$?
  check_equal "$name: exit status in the pod, as in preflight's container" "$local_exit" "$pod_exit"
  check_equal "$name: verdict, first error and stage in the pod" "$(outcome "local-$name.json")" \
    "$(outcome "reports/$name.json")"
  echo "$name: $(outcome "reports/$name.json") (exit $pod_exit)"
  ((pod_exit == local_exit)) || tail -5 "$name.pod.out" >&2
done

# A pod that runs as root where the platform runs its jobs as uid 1000.
run_in_pod as-root "$root/examples/mnist/job.yaml" 0 "${philly[@]}"
check_equal "a pod as another user: exit" 2 $?
check_contains "a pod as another user: message" "runAsUser to 1000" "$(jq -r .error.message reports/as-root.json)"

# A pod without the folder of the job's inputs.
name=no-inputs-folder
run_in_pod "$name" "$root/tests/jobs/permission_write_into_input/job.yaml" 1000 /philly /tmp /home/job /opt/preflight
check_equal "a pod without the inputs' folder: exit" 3 $?
check_contains "a pod without the inputs' folder: message" "/hdfs/data/" "$(jq -r .error.message "reports/$name.json")"
check_contains "a pod without the inputs' folder: what to do" "emptyDir" "$(jq -r .error.message "reports/$name.json")"

# The pods wrote into overlays of their own: the image's cached root verifies.
"$preflight" cache verify >verify.out 2>&1
check_contains "the cached root after the pods" "${digest:7:12}  verified" "$(cat verify.out)"

finish
