"""The harness's bytecode for an image's own interpreter.

Preflight runs this with the image's interpreter (`python3 -I -B -S -c <this file>`, nothing
written) and reads one JSON object from stdin:

    {"files": [{"path": "site/preflight_harness/measure.py",
                "origin": "/opt/preflight/emulator/site/preflight_harness/measure.py",
                "text": "..."}]}

Each file's text is compiled as if imported from `origin`, into a hash-checked .pyc (PEP 552:
the interpreter compares the source's hash, not its time, so a copy of the source keeps its
bytecode). It prints one JSON line:

    {"tag": "cpython-313", "files": [{"path": "...", "pyc": "<hex>"}]}

`tag` is the interpreter's cache tag (the .pyc's name is `<module>.<tag>.pyc`), null when it
keeps no bytecode or cannot write hash-checked files (before Python 3.7): then every run
compiles the harness, as before (docs/harness.md "The harness's bytecode"). Standard library
only, Python 3.6 and later."""

import binascii
import json
import sys


def main():
    request = json.loads(sys.stdin.read())
    tag = getattr(sys.implementation, "cache_tag", None)
    try:
        import importlib.util
        from importlib._bootstrap_external import _code_to_hash_pyc
        source_hash = importlib.util.source_hash
    except (ImportError, AttributeError):
        tag = None
    files = []
    if tag:
        for item in request["files"]:
            source = item["text"].encode("utf-8")
            code = compile(source, item["origin"], "exec", dont_inherit=True)
            pyc = _code_to_hash_pyc(code, source_hash(source), True)
            files.append({"path": item["path"], "pyc": binascii.hexlify(bytes(pyc)).decode("ascii")})
    sys.stdout.write(json.dumps({"tag": tag, "files": files}) + "\n")


main()
