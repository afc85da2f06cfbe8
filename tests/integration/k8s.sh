#!/usr/bin/env bash
# `preflight export k8s` and the pods it describes, run as a kubelet would run them:
# - the golden manifest (tests/golden/preflight-k8s.yaml) and a real export are valid against
#   the Kubernetes API's schema for ConfigMap, NetworkPolicy and Job (tests/tools/k8s_check.mjs,
#   offline); a broken manifest is not (the control);
# - every pod of the export's Indexed Jobs runs in a runc stand-in made from its template: the
#   image's cached root under an overlay of the test's own, read-only as
#   readOnlyRootFilesystem says; runAsUser and runAsGroup; no capabilities; no network; a tmpfs
#   for each emptyDir, the export's shared folder for the claim (subPath and readOnly as
#   written), the ConfigMap's keys as files; the container's command, args and env with
#   JOB_COMPLETION_INDEX. Each job's exit status, verdict, first error category and stage, as
#   `preflight collect` of the pods' reports gives them, equal its local `preflight run`.
# Controls: --in-pod outside a pod (exit 2); a pod running as another user (exit 2, naming
# runAsUser); a pod without one of the emptyDirs (exit 3, naming the folder and emptyDir); the
# cached roots verify afterwards.
# Usage: k8s.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
tools=$root/tests/tools
command -v jq >/dev/null || { echo "SKIP: jq is not installed" >&2; exit 77; }
require_npm_package kubernetes-models

work=$(mktemp -d)
pods=()
digests=()  # of the images the pods ran on
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

# The schema: the golden manifest passes, a broken one does not.
node "$tools/k8s_check.mjs" "$root/tests/golden/preflight-k8s.yaml" >golden.out 2>&1
status=$?
check_equal "the golden manifest against the schema: exit ($(tr '\n' ' ' <golden.out))" 0 "$status"
sed 's/action: Count/action: Retry/; s/completions: 2$/completions: two/' "$root/tests/golden/preflight-k8s.yaml" \
  >broken.yaml
node "$tools/k8s_check.mjs" broken.yaml >broken.out 2>&1
check_equal "control: a broken manifest: exit" 1 $?
check_contains "control: a broken manifest: the action" "rules/2/action must be equal to one of the allowed values" \
  "$(cat broken.out)"
check_contains "control: a broken manifest: completions" "spec/completions must be integer" "$(cat broken.out)"

# Outside a pod, --in-pod is refused before it touches anything.
env -u KUBERNETES_SERVICE_HOST -u PREFLIGHT_IN_POD "$preflight" run "$root/examples/mnist/job.yaml" --in-pod \
  >/dev/null 2>outside.err
check_equal "--in-pod outside a pod: exit" 2 $?
check_contains "--in-pod outside a pod: message" "not a Kubernetes pod" "$(cat outside.err)"

# The pods' roots are overlays over the images' cached roots, which only root may mount.
if [[ $(id -u) != 0 ]] || ! command -v runc >/dev/null; then
  finish >/dev/null
  echo "SKIP: the pods' stand-ins need root and runc (overlay mounts); the schema checks passed" >&2
  exit 77
fi

# The claim's volume: the jobs, and the export written onto it. Four philly jobs on the
# pytorch image (a pass and three predicted failures) and a SageMaker job run as root.
shared=$work/shared
mkdir -p "$shared/jobs"
jobs=("$root/examples/mnist" "$root/tests/jobs/path_laptop_dataset" "$root/tests/jobs/permission_write_into_input"
  "$root/tests/jobs/platform_philly_writes_outputs_folder" "$root/tests/jobs/platform_sagemaker_pass")
for job in "${jobs[@]}"; do cp -r "$job" "$shared/jobs/"; done
# The jobs are one repository, whose files each of them may name (docs/cli.md "--allow"):
# platform_philly_writes_outputs_folder's code is its azureml sibling's, not itself a job here.
git init -q "$shared/jobs"
mkdir -p "$shared/jobs/platform_azureml_writes_outputs_folder"
cp -r "$root/tests/jobs/platform_azureml_writes_outputs_folder/code" "$shared/jobs/platform_azureml_writes_outputs_folder/"
"$preflight" export k8s "$shared/jobs" --out "$shared/export" --claim team-data --mount "$shared" \
  --registry-image pytorch=registry.example/team/pytorch:1 --registry-image python=registry.example/team/python:1 \
  >export.out 2>&1
status=$?
check_equal "export k8s: exit ($(tail -3 export.out))" 0 "$status"
node "$tools/k8s_check.mjs" "$shared/export/preflight.yaml" --pods pods.json >check.out 2>&1
status=$?
check_equal "the export against the schema: exit ($(tr '\n' ' ' <check.out))" 0 "$status"
[[ -s pods.json ]] || { fail "k8s_check.mjs wrote no pods"; finish; }
check_equal "pods" "${#jobs[@]}" "$(jq length pods.json)"

# Starts the pod `jq`'s POD_FILTER picks from pods.json (after EDIT, a jq filter on it) in runc
# stand-ins, its containers in order, each on a fresh overlay of the image's cached root, its
# emptyDirs folders that outlive each container, as the kubelet's do. The exit status of the
# first container that fails, else of the last.
run_pod() {  # NAME POD_FILTER [EDIT]
  local name=$1 filter=$2 edit=${3:-.}
  jq "$filter | $edit" pods.json >"$name.pod.json"
  local digest rootfs
  digest=$(jq -r '.image | split(" ")[1]' "$name.pod.json")
  digests+=("$digest")
  rootfs=${PREFLIGHT_CACHE:-$HOME/.cache/preflight}/rootfs/${digest/:/-}/rootfs
  local volumes=$work/$name.volumes volume
  mkdir -p "$volumes/configmap"
  while read -r volume; do
    mkdir -p "$volumes/$volume"
    chmod 1777 "$volumes/$volume"
  done < <(jq -r '[.containers[].mounts[] | select(.kind == "emptyDir") | .volume] | unique[]' "$name.pod.json")
  jq -r '[.containers[].mounts[] | select(.kind == "configMap")][0].data | to_entries[]
    | "\(.key)\t\(.value | rtrimstr("\n"))"' "$name.pod.json" |
    while IFS=$'\t' read -r key value; do printf '%s\n' "$value" >"$volumes/configmap/$key"; done
  local c count status=0
  count=$(jq '.containers | length' "$name.pod.json")
  for ((c = 0; c < count; c++)); do
    local pod=pod-$name-$c-$$
    pods+=("$pod")
    mkdir -p "$pod/root" "$pod/upper" "$pod/work"
    # The mount points, made in the overlay's own layer: the cached root is never written.
    local path
    while read -r path; do mkdir -p "$pod/upper$path"; done < <(jq -r ".containers[$c].mounts[].path" "$name.pod.json")
    mount -t overlay overlay -o "lowerdir=$rootfs,upperdir=$work/$pod/upper,workdir=$work/$pod/work" "$pod/root" ||
      { fail "$name: cannot mount the pod's root"; return 125; }
    jq --arg root "$work/$pod/root" --arg shared "$shared" --arg volumes "$volumes" --argjson c "$c" '
      .index as $index | .uid as $uid | .gid as $gid | "\(.job)-\(.index)" as $host | .containers[$c] | {
      ociVersion: "1.0.2",
      root: {path: $root, readonly: .readOnlyRoot},
      hostname: $host,
      process: {
        user: {uid: $uid, gid: $gid}, cwd: "/", terminal: false, noNewPrivileges: true, args: .args,
        env: (["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "PREFLIGHT_IN_POD=1",
               "JOB_COMPLETION_INDEX=\($index)"] + .env),
        capabilities: {bounding: [], effective: [], permitted: []}},
      mounts: ([
        {destination: "/proc", type: "proc", source: "proc"},
        {destination: "/dev", type: "tmpfs", source: "tmpfs", options: ["nosuid", "mode=755"]},
        {destination: "/dev/pts", type: "devpts", source: "devpts", options: ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
        {destination: "/dev/shm", type: "tmpfs", source: "shm", options: ["nosuid", "noexec", "nodev", "mode=1777"]},
        {destination: "/sys", type: "sysfs", source: "sysfs", options: ["nosuid", "noexec", "nodev", "ro"]}]
        + [.mounts[] | {destination: .path, type: "bind",
          source: (if .kind == "emptyDir" then "\($volumes)/\(.volume)" elif .kind == "claim" then "\($shared)/\(.subPath)"
                   else "\($volumes)/configmap" end),
          options: ["rbind", (if .readOnly then "ro" else "rw" end)]}]
        # A folder before what is mounted inside it, as containerd orders a container'"'"'s mounts.
        | sort_by(.destination | split("/") | length)),
      linux: {namespaces: [{type: "pid"}, {type: "ipc"}, {type: "uts"}, {type: "mount"}, {type: "network"}],
              maskedPaths: ["/proc/kcore", "/proc/keys"], readonlyPaths: ["/proc/sys", "/proc/sysrq-trigger"]}
    }' "$name.pod.json" >"$pod/config.json"
    timeout 300 runc run --bundle "$pod" "$pod" >>"$name.pod.out" 2>&1 </dev/null
    status=$?
    ((status == 0)) || break
  done
  return "$status"
}

# The verdict, and the first error's category and stage, of a report.
outcome() {  # REPORT
  jq -c '[.verdict, ([.findings[] | select(.severity == "error")][0] // {} | [.category, .stage])]' "$1" 2>/dev/null
}

chmod -R a+rX "$shared"
chmod 777 "$shared/export/reports"
declare -A pod_exit
for i in $(seq 0 $(($(jq length pods.json) - 1))); do
  run_pod "$i" ".[$i]"
  pod_exit[$i]=$?
done
"$preflight" collect "$shared/export/reports" --json collected.json >collect.out 2>&1
for i in "${!pod_exit[@]}"; do
  name=$(jq -r '"\(.job)-\(.index)"' "$i.pod.json")
  group=${name%-*}
  group=${group##*-}
  job=$(jq -r "[.containers[].mounts[] | select(.kind == \"configMap\")][0].data[\"job-$group-$(jq .index "$i.pod.json")\"]" \
    "$i.pod.json")
  "$preflight" run -q "$job" --json "local-$i.json" >/dev/null 2>&1
  local_exit=$?
  report=$shared/export/reports/$group-$(jq .index "$i.pod.json").json
  check_equal "$(basename "$(dirname "$job")"): exit status in its pod, as in preflight's container" \
    "$local_exit" "${pod_exit[$i]}"
  check_equal "$(basename "$(dirname "$job")"): verdict, first error and stage in its pod" \
    "$(outcome "local-$i.json")" "$(outcome "$report")"
  echo "$(basename "$(dirname "$job")") in $name: $(outcome "$report") (exit ${pod_exit[$i]})"
  ((local_exit == pod_exit[$i])) || tail -5 "$i.pod.out" >&2
done
check_equal "collect: jobs" "${#jobs[@]}" "$(jq .jobs collected.json 2>/dev/null)"

# A pod that runs as root where the platform runs its jobs as uid 1000.
run_pod as-root '[.[] | select(.uid == 1000)][0]' \
  '.uid = 0 | .gid = 0 | .containers[].env |= map(if startswith("PREFLIGHT_REPORTS=") then "PREFLIGHT_REPORTS=/tmp" else . end)'
check_equal "a pod as another user: exit" 2 $?
check_contains "a pod as another user: message" "runAsUser to 1000" "$(cat as-root.pod.out)"

# A pod without the emptyDir of the code folder.
run_pod no-code '[.[] | select(.uid == 1000)][0]' \
  'del(.containers[].mounts[] | select(.path == "/philly/code"))
   | .containers[].env |= map(if startswith("PREFLIGHT_REPORTS=") then "PREFLIGHT_REPORTS=/tmp" else . end)'
check_equal "a pod without the code's emptyDir: exit" 3 $?
check_contains "a pod without the code's emptyDir: message" "/philly/code" "$(cat no-code.pod.out)"
check_contains "a pod without the code's emptyDir: what to do" "emptyDir" "$(cat no-code.pod.out)"

# The pods wrote into overlays of their own: the cached roots of their images verify (those
# alone: reading every image in a shared cache cold takes minutes).
"$preflight" cache verify "${digests[@]}" >verify.out 2>&1
status=$?
check_equal "the cached roots after the pods ($(tail -2 verify.out))" 0 "$status"

finish
