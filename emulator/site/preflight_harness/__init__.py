"""Preflight's harness inside the job (docs/harness.md). Loaded at every interpreter start and
compiled each time (its folder is read-only), so this file holds only start-up, with
data_watch; the rest is imported lazily: events, stages, report, torch_hooks. Python 3.6 to
3.13, standard library.
Nothing here may raise into the job."""

import _thread
import os
import sys
import time

HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))
state = None  # the process's HarnessState once install() ran
local = _thread._local()  # .busy: the harness's own work is running on this thread


class HarnessState(object):
    """Everything the harness remembers in one process."""

    def __init__(self, events, phase):
        self.events, self.phase = events, phase
        self.t0, self.pid = time.monotonic(), os.getpid()
        self.stage = "setup" if phase == "setup" else "init"
        try:
            self.cwd = os.getcwd()
        except OSError:
            self.cwd = "/"
        self.code_dir = os.environ.get("PREFLIGHT_CODE_DIR", "").rstrip("/")
        try:
            self.steps = int(os.environ.get("PREFLIGHT_STEPS", 2))
        except ValueError:
            self.steps = 2
        self.trained = False       # a backward pass or optimizer step has happened
        self.optimizers = 0        # optimizers constructed so far
        self.train_stack = None    # user frames (code, lasti) when training last began
        self.reported = {}         # id(exception) -> (exception, stage, path)
        self.caps_seen = set()     # where-keys of loops already reported as capped
        self.exit_code = None      # sys.exit's argument, normalised
        self.errors = 0
        self.torch_patched = self.threading_patched = False
        self.stack_fd = None       # where faulthandler writes this process's stack on SIGUSR2
        self.fork_hooked = False
        self.started = None        # wall-clock time of t0, as the start event gives it
        self.trace = None          # the trace module once tracing started (torch_hooks)


def append(path, data):
    """One write() on an O_APPEND descriptor: lines from concurrent processes never mix.
    O_NONBLOCK: should the job put a FIFO in the file's place, the harness never waits on it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK, 0o666)
    except OSError:
        return
    try:
        os.write(fd, data)
    except OSError:
        pass
    finally:
        os.close(fd)


def emit(ev, **fields):
    from .events import emit as _emit
    _emit(ev, **fields)


def harness_error(where, exc):
    try:
        from .events import harness_error as _error
        _error(where, exc)
    except Exception:
        pass


def guard(where, fn, *args):
    """Runs the harness's own bookkeeping: a failure is reported, never raised into the job.
    While it runs, the torch calls it makes are not the job's (layers.py does not record them)."""
    local.busy = getattr(local, "busy", 0) + 1
    try:
        return fn(*args)
    except Exception as exc:
        harness_error(where, exc)
        return None
    finally:
        local.busy -= 1


def install():
    """Called by sitecustomize when PREFLIGHT_EVENTS is set; idempotent."""
    global state
    events = os.environ.get("PREFLIGHT_EVENTS")
    if not events or state is not None:
        return
    state = HarnessState(events, os.environ.get("PREFLIGHT_PHASE", "command"))
    append(events, _start_line(state, _argv()))
    for step in (_install_excepthook, _install_exit, _install_import_hook, _install_data_watch,
                 _install_stack_dump, _install_line_watch):
        try:
            step()
        except Exception as exc:
            harness_error(step.__name__, exc)


def after_site_hooks():
    """After the image's own sitecustomize, which may have replaced sys.excepthook."""
    if state is not None and getattr(sys.excepthook, "__module__", "") != __name__:
        _install_excepthook()


def _start_line(st, argv):
    # Formatted by hand: importing json here would cost more than the rest of start-up.
    strings = [st.phase, st.stage] + argv
    quoted = ['"%s"' % s.replace("\\", "\\\\").replace('"', '\\"') for s in strings]
    now = time.monotonic() - st.t0
    st.started = round(time.time() - now, 6)
    text = '{"ev":"start","t":%r,"pid":%d,"started":%r,"python":"%d.%d.%d","argv":[%s],' \
           '"phase":%s,"stage":%s}\n' % ((round(now, 6), st.pid, st.started)
                                         + tuple(sys.version_info[:3])
                                         + (",".join(quoted[2:]), quoted[0], quoted[1]))
    try:
        if text[:-1].isprintable():
            return text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    from .events import line
    return line("start", st.t0, {"started": st.started,
                                 "python": "%d.%d.%d" % sys.version_info[:3], "argv": argv,
                                 "phase": st.phase, "stage": st.stage})


def _argv():
    argv = getattr(sys, "argv", None)
    if argv is not None:
        return list(argv)
    try:  # Python < 3.8 sets sys.argv after site: the kernel's copy, minus the interpreter
        with open("/proc/self/cmdline", "rb") as f:
            return [os.fsdecode(a) for a in f.read().split(b"\0")[1:-1]]
    except OSError:
        return []


def _install_excepthook():
    original = sys.excepthook

    def excepthook(tp, value, tb):
        try:
            from . import report
            report.uncaught(value, tb, "excepthook")
        except Exception as exc:
            harness_error("excepthook", exc)
        return original(tp, value, tb)

    sys.excepthook = excepthook


def _install_exit():
    import atexit
    original = sys.exit

    def exit(*args):
        try:
            _note_exit(args[0] if args else None)
        except Exception as exc:
            harness_error("sys.exit", exc)
        return original(*args)

    sys.exit = exit
    atexit.register(_at_exit)


def _note_exit(code):
    """sys.exit(code) in the main thread: the code the exit event reports."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.current_thread() is not threading.main_thread():
        return
    state.exit_code = 0 if code is None else code if isinstance(code, int) else 1


def _at_exit():
    try:
        if state is None or os.getpid() != state.pid:
            return
        if getattr(sys, "last_value", None) is not None:
            from . import report  # an uncaught exception: the slow path is fine
            report.at_exit()
            return
        code = state.exit_code if state.exit_code is not None else 0
        append(state.events, ('{"ev":"exit","t":%r,"pid":%d,"code":%d}\n' % (
            round(time.monotonic() - state.t0, 6), state.pid, code)).encode())
    except Exception as exc:
        harness_error("atexit", exc)


SIGUSR2 = 12  # on Linux; importing `signal` would cost more than the rest of start-up


def _install_stack_dump():
    """When the dry run's time is up, Preflight sends SIGUSR2 before the kill; faulthandler
    then writes the main thread's stack to stacks-PID.txt beside the events file, from C, so
    even a job stuck inside a C call (a rendezvous, a lock) says where it waits."""
    if not sys.platform.startswith("linux"):
        return
    import faulthandler
    path = os.path.join(os.path.dirname(state.events), "stacks-%d.txt" % os.getpid())
    state.stack_fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    faulthandler.register(SIGUSR2, file=state.stack_fd, all_threads=False)
    if hasattr(os, "register_at_fork") and not state.fork_hooked:
        state.fork_hooked = True  # a forked worker writes its own file
        os.register_at_fork(after_in_child=lambda: guard("stack dump", _install_stack_dump))


def _install_line_watch():
    """The lines static predictions are about (watch.py), only when Preflight lists some."""
    if os.environ.get("PREFLIGHT_WATCH"):
        from . import watch
        watch.install()


def _install_data_watch():
    from . import data_watch
    data_watch.install()


class _ImportWatcher(object):
    """A meta-path finder that only wraps the loader of the watched modules (`torch`,
    `threading`, `argparse`, ...), to patch them once they have finished importing; the
    harness never imports torch itself."""

    watched = ("torch", "threading", "torch.distributed.run",  # torchrun's ranks (ranks.py)
               # and the modules whose epochs/steps clamp.py clamps:
               "argparse", "transformers.training_args", "pytorch_lightning", "lightning.pytorch",
               "keras")

    def find_spec(self, name, path=None, target=None):
        if name not in self.watched:
            return None
        try:
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if finder is not self and find is not None:
                    spec = find(name, path, target)
                    if spec is not None:
                        break
            else:
                return None
            original = getattr(spec.loader, "exec_module", None)
            if original is None or isinstance(spec.loader, type):
                return spec  # a shared loader class (frozen, builtin): leave it alone

            def exec_module(module):
                original(module)
                _loaded(name)

            spec.loader.exec_module = exec_module
            return spec
        except Exception as exc:
            harness_error("find_spec " + name, exc)
            return None


def _install_import_hook():
    sys.meta_path.insert(0, _ImportWatcher())
    for name in _ImportWatcher.watched:
        if name in sys.modules:
            _loaded(name)


def _loaded(name):
    try:
        from . import patches
        patches.loaded(name, sys.modules[name])
    except Exception as exc:
        harness_error("patch " + name, exc)
    watch = sys.modules.get(__name__ + ".data_watch") if name == "torch" else None
    if watch is not None:
        try:
            watch.end_early()
        except Exception as exc:
            harness_error("data watch", exc)
