"""Where things happen: which frames are the job's own code, and how they are reported."""

import os
import sys

from . import HARNESS_DIR
import preflight_harness as core

_user_cache = {}
_LIBRARY_MARKERS = ("/site-packages/", "/dist-packages/")


def absolute(filename):
    if not filename or filename.startswith("<") or os.path.isabs(filename):
        return filename
    return os.path.normpath(os.path.join(core.state.cwd, filename))


def is_harness(filename):
    return filename.startswith(HARNESS_DIR)


def is_user(filename):
    """True for files in the job's code folder (PREFLIGHT_CODE_DIR)."""
    cached = _user_cache.get(filename)
    if cached is not None:
        return cached
    path = absolute(filename)
    code_dir = core.state.code_dir
    if not path or path.startswith("<") or is_harness(path):
        result = False
    elif code_dir:
        result = path.startswith(code_dir + "/")
    else:
        libs = (sys.prefix, sys.base_prefix, sys.exec_prefix)
        result = not any(m in path for m in _LIBRARY_MARKERS) and not any(
            path.startswith(os.path.join(p, "lib") + "/") for p in libs)
    _user_cache[filename] = result
    return result


def frame_dict(code, line):
    return {"file": absolute(code.co_filename), "line": line, "function": code.co_name,
            "user": is_user(code.co_filename)}


def _torch_dir():
    torch = sys.modules.get("torch")
    path = getattr(torch, "__file__", None)
    return os.path.dirname(path) + "/" if path else None


def where(frame):
    """The innermost user frame from `frame` outwards; else the innermost frame outside the
    harness and PyTorch; else None."""
    torch_dir = _torch_dir()
    fallback = None
    f = frame
    while f is not None:
        filename = f.f_code.co_filename
        if is_user(filename):
            return frame_dict(f.f_code, f.f_lineno)
        if fallback is None and not is_harness(filename) and not (
                torch_dir and absolute(filename).startswith(torch_dir)):
            fallback = f
        f = f.f_back
    if fallback is not None:
        return frame_dict(fallback.f_code, fallback.f_lineno)
    return None


def user_stack(frame):
    """The user frames from the outermost in, as (code object, offset of the last
    instruction): what validate-vs-evaluate compares."""
    stack = []
    f = frame
    while f is not None:
        if is_user(f.f_code.co_filename):
            stack.append((f.f_code, f.f_lasti))
        f = f.f_back
    stack.reverse()
    return stack


def self_of(frame):
    """The `self` argument of a method frame, or None."""
    code = frame.f_code
    if code.co_argcount < 1 or code.co_varnames[0] != "self":
        return None
    try:
        return frame.f_locals.get("self")
    except Exception:
        return None


def inside_init_of(frame, classes, exclude=None):
    """True when an __init__ of an instance of `classes` (other than `exclude`) is on the stack."""
    f = frame
    while f is not None:
        if f.f_code.co_name == "__init__":
            obj = self_of(f)
            if obj is not None and obj is not exclude and isinstance(obj, classes):
                return True
        f = f.f_back
    return False
