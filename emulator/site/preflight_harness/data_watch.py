"""Reading the data before training enters stage `data` (docs/harness.md "Stage rules"), for
jobs that read it without a Dataset (np.load, open, pandas, a corpus read line by line): a file
or folder under an input mount opened or listed, or a data file read from anywhere else the job
keeps files (its code folder, a folder an earlier step wrote); not the Python installation, the
system's folders, hidden folders (library caches), source, configuration or weights, and nothing
the import system reads.

An audit hook (Python 3.8+) hears every such read, but it cannot be removed, and once one is
installed every audited event costs the interpreter a call: PyTorch 2.6's import raises some
15,700, about 10 ms of CPU, whatever the hook does with them (a C function as the hook costs
nearly as much). So until torch has imported, thin wrappers of `open`, `os.open`, `os.listdir`
and `os.scandir` see the job's reads, and the audit hook takes over from them once it has
(`end_early`), when the module-level imports that raise most events are behind."""

import builtins
import io
import os
import sys

import preflight_harness as core

_EVENTS = frozenset(("open", "os.listdir", "os.scandir"))
_WRITING = getattr(os, "O_WRONLY", 1) | getattr(os, "O_RDWR", 2)
_NOT_DATA = (".py", ".pyc", ".pyi", ".so", ".pth", ".pt", ".ckpt", ".safetensors", ".json", ".yaml",
             ".yml", ".toml", ".cfg", ".ini", ".conf")
_wrapped = []  # (module, name, original, wrapper) while the wrappers watch
_inputs = _exact = _system = ()  # the input mounts (with and without "/"), the system's folders


def install():
    if not hasattr(sys, "addaudithook"):
        return
    inputs = tuple(p.rstrip("/") + "/" for p in os.environ.get("PREFLIGHT_INPUTS", "").split(":") if p)
    system = tuple(sorted(set(p.rstrip("/") + "/" for p in (
        sys.prefix, sys.base_prefix, sys.exec_prefix, "/usr", "/lib", "/lib64", "/bin", "/sbin",
        "/etc", "/proc", "/sys", "/dev", "/run", "/var", "/opt/preflight") if p)))
    global _inputs, _exact, _system
    _inputs, _exact, _system = inputs, tuple(p[:-1] for p in inputs), system
    if "torch" in sys.modules:
        sys.addaudithook(_audit)
        return
    _wrap((builtins, io), "open", "open", _open_args)  # one function, which pathlib calls as io.open
    _wrap((os,), "open", "open", _os_open_args)
    _wrap((os,), "listdir", "os.listdir", _listing_args)
    _wrap((os,), "scandir", "os.scandir", _listing_args)


def end_early():
    """torch has imported: the audit hook watches from now on, and each wrapper the job's
    modules have not replaced gives its place back to the function it wraps."""
    if not _wrapped:
        return
    for module, name, original, wrapper in _wrapped:
        if getattr(module, name, None) is wrapper:
            setattr(module, name, original)
    del _wrapped[:]
    sys.addaudithook(_audit)


def _wrap(modules, name, event, to_args):
    original = getattr(modules[0], name)

    def wrapper(*args, **kwargs):
        if _wrapped:  # once the audit hook watches, a wrapper the job kept only passes through
            _seen(event, to_args, args, kwargs, sys._getframe(1))
        return original(*args, **kwargs)

    wrapper.__name__, wrapper.__qualname__ = original.__name__, original.__qualname__
    wrapper.__doc__, wrapper.__wrapped__ = original.__doc__, original
    for module in modules:
        if getattr(module, name, None) is original:
            _wrapped.append((module, name, original, wrapper))
            setattr(module, name, wrapper)


# A wrapper's arguments as the audit event gives them: (path, mode, flags).
def _open_args(file=None, mode="r", *_, **__):
    return file, mode, None


def _os_open_args(path=None, flags=None, *_, **__):
    return path, None, flags


def _listing_args(path=None, *_, **__):
    return (path,)


def _audit(event, args):
    # Some 15,700 events as torch imports, nearly none of them these.
    if event not in _EVENTS:
        return
    _seen(event, None, args, None, sys._getframe(1))


def _seen(event, to_args, args, kwargs, frame):
    st = core.state
    if st.trained or st.stage not in ("setup", "init", "model"):
        return
    if to_args is not None:
        try:
            args = to_args(*args, **kwargs)
        except TypeError:
            return  # a call the function itself refuses
    try:
        path = args[0] if args else None
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return  # a file descriptor
        if not path.startswith("/"):
            path = os.path.normpath(os.path.join(os.getcwd(), path))
        if _is_data(event, args, path, frame):
            from . import stages
            stages.on_data("data read: " + path, frame)
    except Exception as exc:
        core.harness_error("data watch", exc)


def _is_data(event, args, path, frame):
    if path.startswith(_inputs) or path in _exact:
        return True
    if event != "open" or path.startswith(_system) or "/." in path:
        return False
    mode, flags = (tuple(args) + (None, None))[1:3]
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return False
    if isinstance(flags, int) and flags & _WRITING:
        return False
    if "-packages/" in path or path.lower().endswith(_NOT_DATA):
        return False
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return False
        frame = frame.f_back
    return True
