#!/usr/bin/env bash
# Bad input gets a clear error naming the file (and line and column where one applies) and
# exit status 2 — never a crash, a hang or anything left behind: a malformed job file, an
# unknown key, an unknown platform, a corrupt image archive, an archive entry escaping the root;
# and a `cache verify` of what is not in the cache.
# Usage: bad_input.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PREFLIGHT_CACHE=$work/cache
job=$work/job
mkdir -p "$job"
echo 'print("hello")' >"$job/main.py"

expect_usage_error() {  # WHAT EXPECTED_MESSAGE_PART
  local status
  "$preflight" run "$job/job.yaml" >"$work/out" 2>"$work/err" </dev/null
  status=$?
  check_equal "$1: exit status" 2 "$status"
  check_contains "$1: message" "$2" "$(cat "$work/err")"
  check_contains "$1: error prefix" "preflight: error: " "$(cat "$work/err")"
}

printf 'command: python main.py\nresources:\n  gpu: 4\n' >"$job/job.yaml"
expect_usage_error "unknown key" "job.yaml:3:3: unknown key \"gpu\""
check_contains "did you mean" 'did you mean "gpus"?' "$(cat "$work/err")"

printf 'command: [python, main.py\n' >"$job/job.yaml"
expect_usage_error "malformed YAML" "job.yaml:"

printf 'command: python main.py\nplatform: phily\n' >"$job/job.yaml"
expect_usage_error "unknown platform" 'unknown platform "phily"'
check_contains "platform did you mean" 'did you mean "philly"?' "$(cat "$work/err")"

head -c 4096 /dev/urandom >"$job/corrupt.tar"
printf 'command: python main.py\nimage: docker-archive:%s\n' "$job/corrupt.tar" >"$job/job.yaml"
expect_usage_error "corrupt archive" "corrupt.tar"

# A docker-save archive whose layer holds ../escaped.txt.
python3 - "$job" <<'PY'
import io, json, sys, tarfile, hashlib
work = sys.argv[1]
layer = io.BytesIO()
with tarfile.open(fileobj=layer, mode="w") as t:
    for name in ("etc/ok.txt", "../escaped.txt"):
        data = b"payload\n"
        info = tarfile.TarInfo(name)
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
layer_bytes = layer.getvalue()
diff_id = "sha256:" + hashlib.sha256(layer_bytes).hexdigest()
config = json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                     "rootfs": {"type": "layers", "diff_ids": [diff_id]}}).encode()
with tarfile.open(work + "/escape.tar", "w") as t:
    for name, data in (("layer.tar", layer_bytes), ("config.json", config),
                       ("manifest.json", json.dumps([{"Config": "config.json", "RepoTags": ["evil:1"],
                                                       "Layers": ["layer.tar"]}]).encode())):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
PY
printf 'command: python main.py\nimage: docker-archive:%s\n' "$job/escape.tar" >"$job/job.yaml"
expect_usage_error "escaping entry" "../escaped.txt"

# `cache verify IMAGE`: what names no unpacked image is bad input, and says what to give.
expect_verify_error() {  # WHAT IMAGE EXPECTED_MESSAGE_PART
  local status
  "$preflight" cache verify "$2" >"$work/out" 2>"$work/err" </dev/null
  status=$?
  check_equal "cache verify $1: exit status" 2 "$status"
  check_contains "cache verify $1: message" "$3" "$(cat "$work/err")"
  check_contains "cache verify $1: error prefix" "preflight: error: " "$(cat "$work/err")"
}
expect_verify_error "a digest too short" sha256:0123 'at least 12 of its lower-case hex digits'
expect_verify_error "a digest not unpacked" sha256:0123456789ab 'no unpacked image in'
expect_verify_error "an image not built" python 'image python is not built'
expect_verify_error "an unknown built-in" pythno 'no built-in image "pythno"'
expect_verify_error "a folder used in place" "rootfs:$work" 'never unpacked into the cache'

# Nothing of the failed attempts may remain: no unpacked image, no run folder, no file outside.
leftovers=$(find "$PREFLIGHT_CACHE" -mindepth 2 -maxdepth 2 2>/dev/null | grep -E '/(rootfs|runs)/' || true)
[[ -z $leftovers ]] || fail "left behind in the cache: $leftovers"
[[ -z $(find "$work" -name escaped.txt) ]] || fail "the escaping entry was written"
finish
