#!/usr/bin/env bash
# `preflight export slurm` on a real single-node Slurm: the test configures and starts its own
# munged, slurmctld and slurmd (Debian's slurm-wlm and munge) in a temporary folder, on free
# ports, never touching /etc/slurm or /etc/munge; exports an array of jobs (fixtures that pass
# and fail, one of them in a folder with a hostile name, and one that cannot run) into a
# hostile --out folder, submits it with `sbatch`, and checks that `preflight collect` of the
# tasks' reports gives each job the verdict it expects and a local `preflight run` of it gives,
# that Slurm recorded each task's exit status as the local run's, and that collect's exit
# status is the merged verdict's. Everything it started is stopped on every path; afterwards
# no daemon of its own, job step, container or mount may remain. It skips (77) where Slurm or
# munge is not installed or cannot start, and without root.
# Usage: slurm.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
root=$(cd "$(dirname "$0")/../.." && pwd)

skip() {
  echo "SKIP: $*" >&2
  exit 77
}

# Fast fixtures on the python image: four pass, four are predicted to fail.
cases=(platform_slurm_pass platform_sagemaker_pass platform_azureml_pass predict_env_branch_not_taken
  platform_slurm_reads_torchrun_rank platform_philly_writes_outputs_folder predict_env_branch_taken
  permission_write_into_input)

[[ $(id -u) == 0 ]] ||
  skip "the test starts its own slurmctld, slurmd and munged, which needs root (slurmd runs each task as the user who submitted it)"
for tool in munged munge unmunge slurmctld slurmd sbatch sinfo squeue scontrol scancel; do
  command -v "$tool" >/dev/null ||
    skip "$tool is not installed (apt-get install --no-install-recommends slurm-wlm munge)"
done
for tool in jq ss runuser; do
  command -v "$tool" >/dev/null || skip "$tool is not installed"
done
id munge >/dev/null 2>&1 || skip "there is no munge user (the munge package creates it)"
require_runtime

work=$(mktemp -d)
chmod 0711 "$work"  # munged, as user munge, reaches its own folder below
state=$work/slurm
mkdir -p "$state/spool" "$state/log" "$state/run"
munge_dir=$work/munge  # its key, seed, log and pid file; the socket's folder must be open to all
mkdir -m 0700 "$munge_dir"
mkdir -m 0755 "$work/munge-socket"
chown munge: "$munge_dir" "$work/munge-socket"
slurmctld_pid='' slurmd_pid='' munged_pid=''
steps_before=$(pgrep -x slurmstepd | sort || true)

# Stops what the test started, whatever state it is in: the jobs, then the daemons (asked
# first, then killed by their pids), then munged.
stop_slurm() {
  if [[ -n $slurmctld_pid ]]; then
    scancel --quiet --full --user=root 2>/dev/null
    scontrol shutdown >/dev/null 2>&1
  fi
  local pid waited
  for pid in $slurmctld_pid $slurmd_pid $munged_pid; do
    for ((waited = 0; waited < 100; waited++)); do
      kill -0 "$pid" 2>/dev/null || break
      ((waited == 50)) && kill "$pid" 2>/dev/null
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  done
  slurmctld_pid='' slurmd_pid='' munged_pid=''
}

cleanup() {
  stop_slurm
  rm -rf "$work"
}
trap cleanup EXIT

# The daemon logs' last lines, for a skip or a failure that needs them.
logs() {
  local log
  for log in "$munge_dir/munged.log" "$state/log/slurmctld.log" "$state/log/slurmd.log"; do
    [[ -f $log ]] && { echo "--- $log"; tail -5 "$log"; }
  done
}

# Two free TCP ports in a row (slurmctld's, then slurmd's).
free_ports() {
  local port used
  used=" $(ss -Htan | awk '{n = split($4, a, ":"); printf "%s ", a[n]}') "
  for ((port = 16817; port < 17817; port += 2)); do
    [[ $used != *" $port "* && $used != *" $((port + 1)) "* ]] && { echo "$port"; return 0; }
  done
  return 1
}

# munged with a key of its own, on its own socket.
head -c 1024 /dev/urandom >"$munge_dir/munge.key"
chown munge: "$munge_dir/munge.key"
chmod 0400 "$munge_dir/munge.key"
socket=$work/munge-socket/munge.socket
runuser -u munge -- munged --key-file="$munge_dir/munge.key" --socket="$socket" \
  --pid-file="$munge_dir/munged.pid" --log-file="$munge_dir/munged.log" --seed-file="$munge_dir/munged.seed" ||
  skip "munged does not start: $(logs)"
munged_pid=$(cat "$munge_dir/munged.pid" 2>/dev/null)
munge -n -S "$socket" | unmunge -S "$socket" >/dev/null 2>&1 || skip "munge cannot encode and decode a credential: $(logs)"

port=$(free_ports) || skip "no two free TCP ports in a row between 16817 and 17817"
node=$(hostname -s)
export SLURM_CONF=$state/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=preflight-test
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$state/spool/ctld
SlurmdSpoolDir=$state/spool/d
SlurmctldPidFile=$state/run/slurmctld.pid
SlurmdPidFile=$state/run/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
NodeName=$node CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

# In the foreground of a background shell, so that the pids are the daemons' own.
slurmctld -D -i >"$state/log/slurmctld.out" 2>&1 &
slurmctld_pid=$!
slurmd -D >"$state/log/slurmd.out" 2>&1 &
slurmd_pid=$!
for ((waited = 0; waited < 60; waited++)); do
  [[ $(sinfo -h -N -o %T 2>/dev/null) == idle ]] && break
  if ! kill -0 "$slurmctld_pid" 2>/dev/null || ! kill -0 "$slurmd_pid" 2>/dev/null; then
    skip "slurmctld or slurmd stopped while starting: $(logs)"
  fi
  sleep 0.5
done
[[ $(sinfo -h -N -o %T 2>/dev/null) == idle ]] || skip "the node is not idle after 30 s: $(sinfo -N 2>&1) $(logs)"
echo "slurm: node $node idle, ports $port and $((port + 1))"

# The jobs: the fixtures in place, a copy of the first in a folder with a hostile name, and a
# copy whose image is not there, which Preflight cannot run (exit 2, verdict error).
hostile=$work/jobs/"it's a \"job\" \$HOME \`x\` %a #1"
mkdir -p "$hostile" "$work/jobs/no_image"
cp -r "$root/tests/jobs/${cases[0]}/." "$hostile/"
cp -r "$root/tests/jobs/${cases[0]}/." "$work/jobs/no_image/"
sed -i 's|^image: .*|image: oci:./no-such-layout|' "$work/jobs/no_image/job.yaml"
jobs=("$hostile/job.yaml")
names=("${cases[0]} (hostile folder)")
verdicts=("$(sed -n 's/^verdict=//p' "$root/tests/jobs/${cases[0]}/expect")")
for case in "${cases[@]:1}"; do
  jobs+=("$root/tests/jobs/$case/job.yaml")
  names+=("$case")
  verdicts+=("$(sed -n 's/^verdict=//p' "$root/tests/jobs/$case/expect")")
done
jobs+=("$work/jobs/no_image/job.yaml")
names+=("no_image")
verdicts+=(error)

out=$work/"export 'o' \"q\" \$PATH %A #2"
started=$(date +%s)
"$preflight" export slurm "${jobs[@]}" --out "$out" --parallel 2 >"$work/export.out" 2>&1
check_equal "export: exit status" 0 "$?"
for file in jobs.txt preflight-array.sbatch; do
  [[ -f $out/$file ]] || fail "export wrote no $file: $(cat "$work/export.out")"
done
((failures == 0)) || finish
check_equal "jobs.txt" "$(printf '%s\n' "${jobs[@]}")" "$(cat "$out/jobs.txt")"
check_contains "array" "#SBATCH --array=0-$((${#jobs[@]} - 1))%2" "$(cat "$out/preflight-array.sbatch")"

# Submitted, then watched until no task is pending or running: `sbatch --wait` would notice
# the end up to 30 s late. Bounded here, below CTest's timeout, so that a hung array still
# ends in the cleanup above.
array_id=$(cd "$work" && sbatch --parsable "$out/preflight-array.sbatch" 2>"$work/sbatch.err")
[[ $array_id =~ ^[0-9]+$ ]] || { fail "sbatch: $(cat "$work/sbatch.err")"; finish; }
for ((waited = 0; waited < 1200; waited++)); do
  [[ -z $(squeue -h -j "$array_id" 2>/dev/null) ]] && break
  sleep 0.5
done
((waited < 1200)) || fail "the array did not finish in 600 s: $(squeue 2>&1) $(logs)"
echo "slurm: array $array_id done in $(($(date +%s) - started)) s"
# Each task's exit status as Slurm recorded it ("ExitCode=STATUS:SIGNAL").
declare -A slurm_exit=()
while read -r task code; do
  slurm_exit[$task]=$code
done < <(scontrol show job "$array_id" --oneliner 2>/dev/null |
  sed -nE 's/.*ArrayTaskId=([0-9]+) .*ExitCode=([0-9]+):0.*/\1 \2/p')

"$preflight" collect "$out/reports" --json "$work/collected.json" >"$work/collect.out" 2>&1
check_equal "collect: exit status (a job is predicted to fail)" 1 "$?"
check_equal "collect: reports" "${#jobs[@]}" "$(jq '.reports | length' "$work/collected.json")"

# The same jobs, one by one, on this machine.
mkdir "$work/local"
for i in "${!jobs[@]}"; do
  "$preflight" run "${jobs[$i]}" -q --json "$work/local/$i.json" >/dev/null 2>&1
  local_status=$?
  local_verdict=$(jq -r .verdict "$work/local/$i.json" 2>/dev/null)
  slurm_verdict=$(jq -r --arg file "$out/reports/$i.json" '.reports[] | select(.file == $file) | .report.verdict' \
    "$work/collected.json")
  echo "job $i ${names[$i]}: expected ${verdicts[$i]}, local $local_verdict (exit $local_status)," \
    "slurm $slurm_verdict (exit ${slurm_exit[$i]:-?})"
  check_equal "${names[$i]}: local verdict" "${verdicts[$i]}" "$local_verdict"
  check_equal "${names[$i]}: collected verdict" "$local_verdict" "$slurm_verdict"
  check_equal "${names[$i]}: task's exit status in Slurm" "$local_status" "${slurm_exit[$i]:-none}"
  [[ -s $out/logs/${array_id}_$i.out ]] || fail "${names[$i]}: no task log $out/logs/${array_id}_$i.out"
done
echo "slurm: $(jq -c .counts "$work/collected.json") in $(($(date +%s) - started)) s with the local runs"

daemons="$slurmctld_pid $slurmd_pid $munged_pid"
stop_slurm
sleep 0.5
for pid in $daemons; do
  kill -0 "$pid" 2>/dev/null && fail "a daemon is left behind: $(ps -o pid=,args= -p "$pid")"
done
# Every process this test started after choosing its configuration has it in its environment:
# the daemons, the job steps, the tasks and their runs.
conf=$SLURM_CONF
for pid in $(unset SLURM_CONF && grep -lzxF "SLURM_CONF=$conf" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
  fail "a process of the test's Slurm is left behind: $(ps -o pid=,args= -p "$pid")"
done
for pid in $(pgrep -x slurmstepd | sort); do
  [[ $'\n'$steps_before$'\n' == *$'\n'$pid$'\n'* ]] || fail "a job step is left behind: $(ps -o pid=,args= -p "$pid")"
done
for i in "${!jobs[@]}"; do
  check_no_leftovers "$(jq -r .job.name "$work/local/$i.json")"
done
finish
