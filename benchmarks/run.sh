#!/usr/bin/env bash
# Measures Preflight side by side with its baselines in one run and writes each part's section
# of docs/benchmarks.md (from its heading up to its hand-written "### Reading these figures"):
#  run     a warm `preflight run` of trivial jobs vs `runc run` of an equivalent hand-made
#          bundle vs a bare chroot of the same command (same root filesystem, same user), in
#          rounds that time every command in turn, so that a change in the machine's load
#          falls on all of them; PREFLIGHT_BASELINE (another build of preflight, e.g. the
#          commit before a change) adds a column, named by PREFLIGHT_BASELINE_NAME;
#  unpack  a cold image unpack vs `tar -x` of the same layer.
# Usage: benchmarks/run.sh [RUNS] [run] [unpack]   (as root, after scripts/setup pytorch python;
# no part named: both). PREFLIGHT (a copy of the binary) keeps a rebuild from changing what is
# measured mid-run.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
shift || true
parts=("$@")
((${#parts[@]})) || parts=(run unpack)
preflight=${PREFLIGHT:-$PWD/build/preflight}
baseline=${PREFLIGHT_BASELINE:-}
baseline_name=${PREFLIGHT_BASELINE_NAME:-baseline}
version=${PREFLIGHT_VERSION:-commit $(git rev-parse --short HEAD)}
command -v hyperfine >/dev/null || apt-get install -y -qq hyperfine >/dev/null

work=$(mktemp -d)

# image → its cached root filesystem (building it first if needed).
rootfs_of() {
  local digest
  digest=$("$preflight" image build --if-missing "$1" | awk '{print $2}')
  echo "${PREFLIGHT_CACHE:-$HOME/.cache/preflight}/rootfs/${digest/:/-}/rootfs"
}

# A hand-made bundle running ARGS as uid 1000 on ROOTFS, read-only root, no network: the
# least a container runtime does for the same command. Its cgroup is CGROUP, beside those of
# Preflight's containers (below, in_cgroup).
make_bundle() {  # DIR ROOTFS CGROUP ARGS...
  local dir=$1 rootfs=$2 cgroup=$3
  shift 3
  mkdir -p "$dir"
  (cd "$dir" && runc spec)
  python3 - "$dir/config.json" "$rootfs" "$cgroup" "$@" <<'PY'
import json, sys
path, rootfs, cgroup, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
config = json.load(open(path))
config["process"].update(terminal=False, args=args, user={"uid": 1000, "gid": 1000})
config["root"] = {"path": rootfs, "readonly": True}
config["linux"]["cgroupsPath"] = cgroup
json.dump(config, open(path, "w"))
PY
}

# Runs COMMAND in the CPU controller's cgroup /preflight/NAME. Preflight's containers run in
# cgroups under /preflight, and the scheduler shares the CPUs between cgroups first: on a
# machine busy with other containers, a command outside them gets a larger share than one in a
# container, whatever its own cost. Each way of the run part runs beside them, alike.
cat >"$work/in_cgroup" <<'SH'
#!/bin/sh
name=$1
shift
for root in /sys/fs/cgroup/cpu /sys/fs/cgroup; do
  if [ -d "$root/preflight" ]; then
    mkdir -p "$root/preflight/$name" && echo $$ >"$root/preflight/$name/cgroup.procs"
    break
  fi
done
exec "$@"
SH
chmod +x "$work/in_cgroup"
remove_cgroups() {
  local root
  for root in /sys/fs/cgroup/*/preflight /sys/fs/cgroup/preflight; do
    [[ -d $root ]] && find "$root" -maxdepth 1 -name 'bench-*-chroot' -type d -exec rmdir {} + 2>/dev/null
  done
  return 0
}
trap 'remove_cgroups; rm -rf "$work"' EXIT

# NAME IMAGE PYTHON_CODE: the commands of one job, one per line as "LABEL<TAB>COMMAND".
run_commands() {
  local name=$1 image=$2 code=$3 rootfs
  rootfs=$(rootfs_of "$image")
  mkdir -p "$work/$name/job"
  printf 'name: bench-%s\nimage: %s\ncommand: python -c %q\n' "$name" "$image" "$code" >"$work/$name/job/job.yaml"
  make_bundle "$work/$name/bundle" "$rootfs" "/preflight/bench-$name-runc" python -c "$code"
  printf 'preflight run\t%s run -q %s\n' "$preflight" "$work/$name/job/job.yaml"
  [[ -z $baseline ]] || printf 'preflight run at %s\t%s run -q %s\n' "$baseline_name" "$baseline" "$work/$name/job/job.yaml"
  printf 'runc run (hand-made bundle)\trunc run --bundle %s bench-%s\n' "$work/$name/bundle" "$name"
  # The image's /dev is empty (devices are never unpacked) and PyTorch reads /dev/urandom as
  # it loads; it also reads the CPUs' description from /proc/cpuinfo and /sys, as it does in
  # any container, and without them prints "Error in cpuinfo" and skips that work. The host's
  # /dev and /sys and a /proc are mounted there in a mount namespace of the chroot's own,
  # which the image's folder never sees (about 4 ms of unshare and mounts).
  # shellcheck disable=SC2016  # expanded by the chroot's sh
  local mounts='mount --bind /dev "$0/dev" && mount -t proc proc "$0/proc" && mount --rbind /sys "$0/sys"'
  # shellcheck disable=SC2016  # the same
  printf 'chroot\t%s bench-%s-chroot unshare --mount --propagation private sh -c %q %s %q\n' "$work/in_cgroup" \
    "$name" "$mounts"' && exec chroot --userspec=1000:1000 "$0" python -c "$1"' "$rootfs" "$code"
}

measure_run() {
  run_commands hello python 'print("hello")' >"$work/hello.commands"
  run_commands torch pytorch 'import torch; print(torch.ones(2).sum().item())' >"$work/torch.commands"
  python3 - "$work" "$runs" "$version" "$(python3 benchmarks/section.py machine)" "$baseline_name" \
    >"$work/run-section.md" <<'PY'
import json, os, resource, shlex, statistics, subprocess, sys, time
work, runs, version, machine, baseline_name = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]

def idle_share(seconds):
    def sample():
        fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
        return fields[3] + fields[4], sum(fields)
    idle0, total0 = sample()
    time.sleep(seconds)
    idle1, total1 = sample()
    return (idle1 - idle0) / max(1, total1 - total0)

def quiet(limit=20):
    """Waits up to `limit` s for a second with the CPUs 80% idle; whether one came."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if idle_share(1) >= 0.8:
            return True
    return False

jobs = {}
for name in ("hello", "torch"):
    jobs[name] = [line.rstrip("\n").split("\t", 1) for line in open(os.path.join(work, name + ".commands"))]
times = {name: {label: [] for label, _ in commands} for name, commands in jobs.items()}
cpu_times = {name: {label: [] for label, _ in commands} for name, commands in jobs.items()}

def cpu_used():
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime
load_before = open("/proc/loadavg").read().split()[0]
quiet_rounds = 0
for round_number in range(runs + 1):  # the first round warms the caches and is not counted
    quiet_rounds += quiet() and round_number > 0
    for name, commands in jobs.items():
        # Every other round in the reverse order: no way always follows the same other one.
        for label, command in (commands if round_number % 2 else list(reversed(commands))):
            cpu_before, start = cpu_used(), time.monotonic()
            # stderr to a file, read only when the command failed: what it said is the reason.
            with open(os.path.join(work, "stderr"), "w+b") as err:
                status = subprocess.call(shlex.split(command), stdout=subprocess.DEVNULL, stderr=err)
                took, cpu = time.monotonic() - start, cpu_used() - cpu_before
                if status != 0:
                    err.seek(0)
                    sys.exit("run.sh: {} exited {}: {}\n{}".format(label, status, command,
                                                                  err.read().decode(errors="replace")[-2000:]))
            if round_number > 0:
                times[name][label].append(took)
                cpu_times[name][label].append(cpu)
load_after = open("/proc/loadavg").read().split()[0]
json.dump({"wall": times, "cpu": cpu_times}, open(os.path.join(work, "run-times.json"), "w"))

def ms(values):
    return "{:.0f} ± {:.0f} ms (median {:.0f})".format(
        statistics.mean(values) * 1e3, statistics.stdev(values) * 1e3, statistics.median(values) * 1e3)

def against(values, base):
    """The ratio of the means, and the difference of each round's pair: mean ± its standard error
    (a load that changes between rounds falls on both sides of a pair), and its median, which a
    few rounds slowed on one side alone move less."""
    differences = [v - b for v, b in zip(values, base)]
    error = statistics.stdev(differences) / len(differences) ** 0.5
    return "{:.2f}×, {:+.0f} ± {:.0f} ms (median {:+.0f})".format(
        statistics.mean(values) / statistics.mean(base), statistics.mean(differences) * 1e3, error * 1e3,
        statistics.median(differences) * 1e3)

has_baseline = any(label.startswith("preflight run at ") for label, _ in jobs["hello"])
print("## A warm `preflight run` against the bare container\n")
print("Measured by `benchmarks/run.sh {} run` ({} rounds timing every command in turn, every other round "
      "in the reverse order, after a warm-up round, each round started after the CPUs were 80% idle for a second, which {} of the {} found "
      "within 20 s; warm caches), side by side in one run of Preflight at {}, {}, on: {}; "
      "1-minute load average {} before the run and {} after it.\n".format(
          runs, runs, quiet_rounds, runs, version, time.strftime("%Y-%m-%d", time.gmtime()), machine,
          load_before, load_after))
print("The same command, root filesystem and user (uid 1000) three ways: the whole Preflight pipeline "
      "(spec, profile, plan, the static checks, overlay root, `runc run --detach` and `runc delete`, "
      "harness, diagnosis, report); `runc run` of a hand-made bundle; a bare `chroot` (with the host's "
      "`/dev` and `/sys` and a `/proc` mounted in a mount namespace of its own). The hand-made bundle and the chroot run in cgroups "
      "beside those of Preflight's containers (`/preflight/bench-*`), so that other containers on the "
      "machine share the CPUs with each way alike. Target (issue 33): a warm `preflight run` within "
      "1.05× and 100 ms of the chroot. Wall time, mean ± standard deviation (median); a comparison "
      "is the ratio of the means and the mean difference of the rounds' pairs ± its standard error "
      "(with the median of those differences):\n")
header = ["job", "preflight run"]
if has_baseline:
    header.append("preflight run at " + baseline_name)
header += ["runc run (hand-made bundle)", "chroot", "preflight run against chroot"]
if has_baseline:
    header.append("at {} against chroot".format(baseline_name))
header.append("preflight run against runc run")
print("| " + " | ".join(header) + " |")
print("|" + "---|" * len(header))
labels = {"hello": "`print(\"hello\")`, image python", "torch": "`import torch` + one op, image pytorch"}
for name, label in labels.items():
    t = times[name]
    row = [label, ms(t["preflight run"])]
    if has_baseline:
        row.append(ms(t["preflight run at " + baseline_name]))
    row += [ms(t["runc run (hand-made bundle)"]), ms(t["chroot"]), against(t["preflight run"], t["chroot"])]
    if has_baseline:
        row.append(against(t["preflight run at " + baseline_name], t["chroot"]))
    row.append(against(t["preflight run"], t["runc run (hand-made bundle)"]))
    print("| " + " | ".join(row) + " |")
print("\nCPU time, the mean user + system time of the command and everything it reaped (the "
      "container's processes included), which a busy machine stretches less than the wall time:\n")
columns = [label for label, _ in jobs["hello"]]
print("| job | " + " | ".join(columns) + " | preflight run against chroot |")
print("|" + "---|" * (len(columns) + 2))
for name, label in labels.items():
    c = cpu_times[name]
    cells = ["{:.0f} ms".format(statistics.mean(c[column]) * 1e3) for column in columns]
    print("| {} | {} | {} |".format(label, " | ".join(cells), against(c["preflight run"], c["chroot"])))
print()
PY
  python3 benchmarks/section.py write "$work/run-section.md"
}

compare_unpack() {  # IMAGE
  local image=$1 cache=$work/cache digest layer
  digest=$("$preflight" image build --if-missing "$image" | awk '{print $2}')
  mkdir -p "$cache/images"
  cp -a "${PREFLIGHT_CACHE:-$HOME/.cache/preflight}/images/$image" "$cache/images/"
  layer=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]+"/blobs/sha256/"+json.load(open(sys.argv[1]+"/index.json"))["manifests"][0]["digest"][7:])); print(m["layers"][0]["digest"][7:])' "$cache/images/$image")
  hyperfine -N --runs 7 --export-json "$work/unpack-$image.json" \
    --prepare "sh -c 'rm -rf $cache/rootfs $work/tar-x; sync'" -n "preflight unpack (cold)" \
    "env PREFLIGHT_CACHE=$cache $preflight image build --if-missing $image" \
    --prepare "sh -c 'rm -rf $cache/rootfs $work/tar-x; mkdir $work/tar-x; sync'" -n "tar -x" \
    "tar --numeric-owner -xf $cache/images/$image/blobs/sha256/$layer -C $work/tar-x" >&2
  rm -rf "$cache" "$work/tar-x"
}

measure_unpack() {
  compare_unpack python
  compare_unpack pytorch
  python3 - "$work" "$version" "$(python3 benchmarks/section.py machine)" >"$work/unpack-section.md" <<'PY'
import json, os, sys, time
work, version, machine = sys.argv[1], sys.argv[2], sys.argv[3]
def results(name):
    return {r["command"]: r for r in json.load(open(os.path.join(work, name + ".json")))["results"]}
def ms(r):
    return "{:.1f} ± {:.1f} ms".format(r["mean"] * 1e3, r["stddev"] * 1e3)
print("## Cold image unpack against `tar -x`\n")
print("Measured by `benchmarks/run.sh RUNS unpack` (hyperfine, 7 runs each, cold: the unpacked image "
      "removed before each run) at {}, {}, on: {}.\n".format(version, time.strftime("%Y-%m-%d", time.gmtime()),
                                                           machine))
print("Unpacking the image's layer into the digest-keyed cache (libarchive, whiteouts, escape checks, "
      "written to a temporary folder and renamed) against GNU tar extracting the same layer blob. "
      "Target: within 1.2×.\n")
print("| image | preflight unpack (cold) | tar -x | ratio |")
print("|---|---|---|---|")
for image in ("python", "pytorch"):
    r = results("unpack-" + image)
    p, t = r["preflight unpack (cold)"], r["tar -x"]
    print("| {} | {} | {} | {:.2f}× |".format(image, ms(p), ms(t), p["mean"] / t["mean"]))
print()
PY
  python3 benchmarks/section.py write "$work/unpack-section.md"
}

for part in "${parts[@]}"; do
  case $part in
    run) measure_run ;;
    unpack) measure_unpack ;;
    *)
      echo "run.sh: unknown part '$part' (run, unpack)" >&2
      exit 2
      ;;
  esac
done
sed -n '/^## A warm .preflight run. against/,/^## Example jobs/p' docs/benchmarks.md
