"""Exception events: type, message, errno, path, stage and frames (docs/harness.md)."""

import os
import sys

import preflight_harness as core
from . import frames

_MAX_MESSAGE = 8000
_MAX_FRAMES = 100
_TRACEBACK_HEADER = "Traceback (most recent call last):"


def uncaught(exc, tb, origin):
    """An exception that ended the main thread, a thread, or the process."""
    st = core.state
    if exc is None or id(exc) in st.reported:
        return
    stage, path = _inherited(exc)
    raw_frames = _tb_frames(tb)
    _emit(exc, raw_frames, origin, stage or _saving(raw_frames) or st.stage, path)


def escaped(exc, frame, origin, path):
    """An exception leaving a hooked call (torch.save): reported at once, with the path the
    call was given, and remembered so the uncaught report does not repeat it."""
    st = core.state
    if not isinstance(exc, Exception) or id(exc) in st.reported:
        return
    outer = []
    f = frame
    while f is not None:
        outer.append((f.f_code, f.f_lineno))
        f = f.f_back
    outer.reverse()
    _emit(exc, outer + _tb_frames(exc.__traceback__), origin, st.stage, path)


def at_exit():
    """Interpreter exit of the process that started the harness."""
    last = getattr(sys, "last_value", None)
    if last is not None:
        # The interpreter sets sys.last_value for the uncaught exception even when a later
        # sys.excepthook (the job's own, say) bypassed ours.
        uncaught(last, getattr(last, "__traceback__", None), "last_value")
        code = 1
    else:
        code = core.state.exit_code if core.state.exit_code is not None else 0
    core.emit("exit", code=code)


def type_name(exc):
    cls = type(exc)
    module = getattr(cls, "__module__", "builtins")
    name = getattr(cls, "__qualname__", cls.__name__)
    return name if module in ("builtins", "exceptions") else module + "." + name


def _emit(exc, raw_frames, origin, stage, path):
    st = core.state
    message = _message(exc)
    errno = getattr(exc, "errno", None)
    if not isinstance(errno, int):
        errno = None
    filename = getattr(exc, "filename", None)
    if isinstance(filename, bytes):
        filename = os.fsdecode(filename)
    if isinstance(filename, str) and filename:
        path = filename
    frame_list = [frames.frame_dict(code, line) for code, line in raw_frames
                  if not frames.is_harness(code.co_filename)]
    remote, remote_errno, remote_path = _remote_traceback(message)
    frame_list += remote
    if errno is None:
        errno = remote_errno
    if not path:
        path = remote_path
    if len(frame_list) > _MAX_FRAMES:
        frame_list = frame_list[:10] + frame_list[-(_MAX_FRAMES - 10):]
    st.reported[id(exc)] = (exc, stage, path)
    fields = dict(type=type_name(exc), message=message, errno=errno, path=path or None,
                  stage=stage, frames=frame_list, origin=origin)
    if _from_cap(exc):
        fields["cap_stop"] = True
    core.emit("exception", **fields)


def _message(exc):
    try:
        text = str(exc)
    except Exception:
        text = "<unprintable %s>" % type(exc).__name__
    if len(text) > _MAX_MESSAGE:
        text = text[:_MAX_MESSAGE // 2] + "\n...\n" + text[-_MAX_MESSAGE // 2:]
    return text


def _tb_frames(tb):
    result = []
    while tb is not None:
        result.append((tb.tb_frame.f_code, tb.tb_lineno))
        tb = tb.tb_next
    return result


def _saving(raw_frames):
    """"checkpoint" when a user frame failed inside the arguments of a `torch.save(...)` call
    (`torch.save(model.module.state_dict(), path)`): they are evaluated before the hooked
    call enters the stage. A failure inside torch.save itself was reported by its hook."""
    for code, line in reversed(raw_frames):
        if frames.is_user(code.co_filename) and _in_save_call(code.co_filename, line):
            return "checkpoint"
    return None


def _in_save_call(filename, line):
    import ast
    import linecache
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "save"
                and isinstance(func.value, ast.Name) and func.value.id == "torch"
                or isinstance(func, ast.Name) and func.id == "save"):
            continue
        last = getattr(node, "end_lineno", None)  # Python 3.8+
        if last is None:  # before 3.8: the last line any part of the call starts on
            last = max(getattr(part, "lineno", node.lineno) for part in ast.walk(node))
        if node.lineno <= line <= last:
            return True
    return False


def _chain(exc):
    seen = set()
    while exc is not None and id(exc) not in seen and len(seen) < 20:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _inherited(exc):
    """Stage and path of an already reported exception this one was raised from."""
    reported = core.state.reported
    for link in _chain(exc):
        if id(link) in reported:
            _, stage, path = reported[id(link)]
            return stage, path
    return None, None


def _from_cap(exc):
    return any(getattr(link, "preflight_cap", False) for link in _chain(exc))


def _remote_traceback(message):
    """Frames, errno and path of a traceback quoted in the message: what a DataLoader worker
    or a torch.multiprocessing child re-raises in the parent."""
    at = message.rfind(_TRACEBACK_HEADER)
    if at < 0:
        return [], None, None
    import re
    found = []
    for m in re.finditer(r'^\s*File "(.*)", line (\d+), in (.*)$', message[at:], re.M):
        found.append({"file": m.group(1), "line": int(m.group(2)),
                      "function": m.group(3).strip(), "user": frames.is_user(m.group(1)),
                      "remote": True})
    errno, path = None, None
    last = message.rstrip().splitlines()[-1] if message.strip() else ""
    m = re.search(r"\[Errno (\d+)\] [^:]*: '(.*)'", last)
    if m:
        errno, path = int(m.group(1)), m.group(2)
    return found, errno, path


def path_argument(f):
    """The file a torch.save was given, as text, when it is a path or a named file."""
    try:
        if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
            return os.fsdecode(os.fspath(f))
        name = getattr(f, "name", None)
        return name if isinstance(name, str) else None
    except Exception:
        return None

