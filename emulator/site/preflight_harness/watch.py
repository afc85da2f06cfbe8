"""Which of the lines that static predictions are about run in the dry run, and in which
stage (docs/harness.md "Watched lines"). Preflight lists them in PREFLIGHT_WATCH, one file per
line: "LINE,LINE,... PATH", PATH relative to the code folder.

Each watched line that runs is one `reached` event; each function holding watched lines that
starts is one `entered` event with its span of lines, so a line that never ran still has the
stage of the code around it. Python 3.12+ uses sys.monitoring: a code object without watched
lines costs one callback, ever. Before 3.12 a global trace function returns at once for code
outside the watched files and traces lines only in code objects that hold a watched line not
yet seen; tracing stops once every watched line has run."""

import os
import sys

import preflight_harness as core

_pending = {}   # absolute file -> set of watched lines not yet seen in this process
_by_name = {}   # co_filename as the code object gives it -> the set above, or None
_codes = {}     # code object -> the watched lines it holds (a set), or None
_TOOL_NAME = "preflight"


def parse(text, code_dir):
    """{absolute file: set of lines} from PREFLIGHT_WATCH's text."""
    files = {}
    for entry in text.split("\n"):
        numbers, _, path = entry.partition(" ")
        if not path:
            continue
        lines = set(int(n) for n in numbers.split(",") if n.isdigit())
        if lines:
            files[os.path.normpath(os.path.join(code_dir or "/", path))] = lines
    return files


def install():
    text = os.environ.get("PREFLIGHT_WATCH")
    if not text:
        return
    _pending.update(parse(text, core.state.code_dir))
    if not _pending:
        return
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        _install_monitoring(monitoring)
    else:
        sys.settrace(_global_trace)


def on_threading(threading):
    """New threads trace too (sys.settrace is per thread)."""
    if _pending and getattr(sys, "monitoring", None) is None and sys.gettrace() is _global_trace:
        threading.settrace(_global_trace)


def _lines_of_file(filename):
    try:
        return _by_name[filename]
    except KeyError:
        pass
    path = filename
    if not path.startswith("/"):
        path = os.path.join(core.state.cwd, path)
    lines = _pending.get(os.path.normpath(path))
    _by_name[filename] = lines
    return lines


def _code_lines(code):
    """The lines of `code` itself (not of the functions it defines)."""
    co_lines = getattr(code, "co_lines", None)
    if co_lines is not None:  # Python 3.10+
        return set(line for _, _, line in co_lines() if line is not None)
    import dis
    return set(line for _, line in dis.findlinestarts(code))


def _watched_in(code):
    """The watched lines not yet seen that `code` holds, or None; emits `entered` the first
    time a function holding watched lines starts."""
    try:
        return _codes[code]
    except KeyError:
        pass
    lines = _lines_of_file(code.co_filename)
    held = None
    if lines:
        own = _code_lines(code)
        held = own & lines or None
        if held and code.co_name != "<module>":
            core.emit("entered", file=_absolute(code.co_filename), first=code.co_firstlineno,
                      last=max(own), stage=core.state.stage)
    _codes[code] = held
    return held


def _absolute(filename):
    return filename if filename.startswith("/") else os.path.normpath(
        os.path.join(core.state.cwd, filename))


def _seen(code, line):
    """A watched line ran: reported once per process. True when `code` has no more to watch."""
    held = _codes.get(code)
    if not held or line not in held:
        return not held
    held.discard(line)
    lines = _lines_of_file(code.co_filename)
    if lines is not None and line in lines:
        lines.discard(line)
        core.emit("reached", file=_absolute(code.co_filename), line=line, stage=core.state.stage)
        if not lines:
            _pending.pop(os.path.normpath(_absolute(code.co_filename)), None)
    return not held


# --- before Python 3.12: sys.settrace --------------------------------------------------------

def _global_trace(frame, event, arg):
    try:
        if not _pending:
            sys.settrace(None)
            return None
        held = _watched_in(frame.f_code)
        return _local_trace if held else None
    except Exception as exc:
        core.harness_error("watch", exc)
        return None


def _local_trace(frame, event, arg):
    if event != "line":
        return _local_trace
    try:
        if _seen(frame.f_code, frame.f_lineno):
            return None  # nothing more to see in this code object
    except Exception as exc:
        core.harness_error("watch", exc)
        return None
    return _local_trace


# --- Python 3.12+: sys.monitoring ------------------------------------------------------------

def _install_monitoring(monitoring):
    tool = None
    for candidate in (3, 4):  # ids 0-2 and 5 are the debugger's, coverage's, profiler's, optimizer's
        try:
            monitoring.use_tool_id(candidate, _TOOL_NAME)
            tool = candidate
            break
        except ValueError:
            continue
    if tool is None:
        return
    events = monitoring.events
    disable = monitoring.DISABLE

    def start(code, offset):
        try:
            if _watched_in(code):
                monitoring.set_local_events(tool, code, events.LINE)
        except Exception as exc:
            core.harness_error("watch", exc)
        return disable

    def line(code, number):
        try:
            if _seen(code, number):
                monitoring.set_local_events(tool, code, 0)
        except Exception as exc:
            core.harness_error("watch", exc)
        return disable

    monitoring.register_callback(tool, events.PY_START, start)
    monitoring.register_callback(tool, events.LINE, line)
    monitoring.set_events(tool, events.PY_START)
