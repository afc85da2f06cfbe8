#!/usr/bin/env bash
# Measures Preflight side by side with its baselines in one run and writes docs/benchmarks.md:
#  1. a warm `preflight run` of trivial jobs vs `runc run` of an equivalent hand-made bundle vs
#     a bare chroot of the same command (same root filesystem, same user);
#  2. a cold image unpack vs `tar -x` of the same layer.
# Usage: benchmarks/run.sh [RUNS]   (as root, after scripts/setup pytorch python)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
preflight=$PWD/build/preflight
command -v hyperfine >/dev/null || apt-get install -y -qq hyperfine >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# image → its cached root filesystem (building it first if needed).
rootfs_of() {
  local digest
  digest=$("$preflight" image build --if-missing "$1" | awk '{print $2}')
  echo "${PREFLIGHT_CACHE:-$HOME/.cache/preflight}/rootfs/${digest/:/-}/rootfs"
}

# A hand-made bundle running ARGS as uid 1000 on ROOTFS, read-only root, no network: the
# least a container runtime does for the same command.
make_bundle() {  # DIR ROOTFS ARGS...
  local dir=$1 rootfs=$2
  shift 2
  mkdir -p "$dir"
  (cd "$dir" && runc spec)
  python3 - "$dir/config.json" "$rootfs" "$@" <<'PY'
import json, sys
path, rootfs, args = sys.argv[1], sys.argv[2], sys.argv[3:]
config = json.load(open(path))
config["process"].update(terminal=False, args=args, user={"uid": 1000, "gid": 1000})
config["root"] = {"path": rootfs, "readonly": True}
json.dump(config, open(path, "w"))
PY
}

compare_run() {  # NAME IMAGE PYTHON_CODE
  local name=$1 image=$2 code=$3 rootfs
  rootfs=$(rootfs_of "$image")
  mkdir -p "$work/$name/job"
  printf 'name: bench-%s\nimage: %s\ncommand: python -c %q\n' "$name" "$image" "$code" >"$work/$name/job/job.yaml"
  make_bundle "$work/$name/bundle" "$rootfs" python -c "$code"
  hyperfine -N --warmup 2 --runs "$runs" --export-json "$work/$name.json" \
    -n "preflight run" "$preflight run -q $work/$name/job/job.yaml" \
    -n "runc run (hand-made bundle)" "runc run --bundle $work/$name/bundle bench-$name" \
    -n "chroot" "chroot --userspec=1000:1000 $rootfs python -c '$code'" >&2
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

compare_run hello python 'print("hello")'
compare_run torch pytorch 'import torch; print(torch.ones(2).sum().item())'
compare_unpack python
compare_unpack pytorch

# The section benchmarks/examples.sh writes (example jobs, harness overhead) is kept as it is.
examples=$(sed -n '/^## Example jobs and harness overhead/,$p' docs/benchmarks.md 2>/dev/null || true)
python3 - "$work" "$runs" >docs/benchmarks.md <<'PY'
import json, os, platform, subprocess, sys
work, runs = sys.argv[1], sys.argv[2]
def results(name):
    return {r["command"]: r for r in json.load(open(os.path.join(work, name + ".json")))["results"]}
def ms(r):
    return "{:.1f} ± {:.1f} ms".format(r["mean"] * 1e3, r["stddev"] * 1e3)
cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], capture_output=True, text=True).stdout.strip()
print("# Benchmarks\n")
print("Measured by `benchmarks/run.sh` ({} runs each, hyperfine, warm caches unless marked cold), "
      "all figures of a table side by side in one run on: {}, {} cores, Linux {}.\n".format(
          runs, cpu, os.cpu_count(), platform.release()))
print("## A warm `preflight run` against the bare container\n")
print("The same command, root filesystem and user (uid 1000) three ways: the whole Preflight pipeline "
      "(spec, profile, plan, overlay root, `runc run --detach` and `runc delete`, harness, diagnosis, report); "
      "`runc run` of a hand-made bundle; a bare `chroot`. Target: Preflight adds under 10% and under "
      "100 ms to the bare container.\n")
print("| job | preflight run | runc run (hand-made bundle) | chroot | added to runc run |")
print("|---|---|---|---|---|")
for name, label in (("hello", "`print(\"hello\")`, image python"), ("torch", "`import torch` + one op, image pytorch")):
    r = results(name)
    p, b, c = r["preflight run"], r["runc run (hand-made bundle)"], r["chroot"]
    added = p["mean"] - b["mean"]
    print("| {} | {} | {} | {} | {:+.1f} ms ({:+.0f}%) |".format(label, ms(p), ms(b), ms(c), added * 1e3, 100 * added / b["mean"]))
print("\n## Cold image unpack against `tar -x`\n")
print("Unpacking the image's layer into the digest-keyed cache (libarchive, whiteouts, escape checks, "
      "written to a temporary folder and renamed) against GNU tar extracting the same layer blob. "
      "Target: within 1.2×.\n")
print("| image | preflight unpack (cold) | tar -x | ratio |")
print("|---|---|---|---|")
for image in ("python", "pytorch"):
    r = results("unpack-" + image)
    p, t = r["preflight unpack (cold)"], r["tar -x"]
    print("| {} | {} | {} | {:.2f}× |".format(image, ms(p), ms(t), p["mean"] / t["mean"]))
PY
[[ -z $examples ]] || printf '\n%s\n' "$examples" >>docs/benchmarks.md
cat docs/benchmarks.md
