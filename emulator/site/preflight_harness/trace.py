"""The dry run's trace (docs/harness.md "Trace"): Chrome Trace Event records of what the job
spent its time on (batches, forward, backward, optimizer steps, checkpoints, the measured step's
layers) and two counters (resident memory, the modelled GPU memory), one file per process,
trace-PID.jsonl beside the events file, one JSON object a line.

Imported when torch is patched, and only with tracing on (PREFLIGHT_TRACE other than 0). The
hooks' hot path appends a tuple to a list; records are serialised when the buffer is written:
every 256 records or 1 s, at exit, and after every record in a process forked from the one
that started the harness (DataLoader workers end through os._exit, which runs no atexit)."""

import atexit
import json
import os
import sys
import time

import preflight_harness as core

MAX_EVENTS = 20000     # per process; the records beyond are counted as dropped
FLUSH_RECORDS = 256
FLUSH_SECONDS = 1.0
MAX_LINE = 4096        # bytes of one line; a longer one loses its args
MAX_NAME = 200
MEMORY_INTERVAL = 0.1  # seconds between two samples of the resident memory

now = time.monotonic

try:
    from _thread import get_native_id as _native_id  # Python 3.8+: the main thread's is the pid
except ImportError:
    from _thread import get_ident as _ident

    def _native_id():
        return _ident() & 0x7fffffff

_current_thread = None  # threading.current_thread, once start() ran (torch imported threading)
# Python 3.6 has no os.register_at_fork: each record checks the pid instead (a system call).
_CHECK_PID = not hasattr(os, "register_at_fork")


class _Buffer(object):
    """This process's records not yet written, and what its file already holds."""

    def __init__(self):
        import _thread
        st = core.state
        self.pid = os.getpid()
        self.path = os.path.join(os.path.dirname(st.events), "trace-%d.jsonl" % self.pid)
        # A process forked from the harness's own writes at once: it may end by os._exit.
        self.eager = self.pid != st.pid
        self.worker_checked = False
        self.records = []
        self.count = 0          # records kept, against MAX_EVENTS
        self.dropped = 0
        self.dropped_written = 0
        self.last_flush = now()
        self.last_memory = -MEMORY_INTERVAL
        # Each thread's tid, found once (get_native_id is a system call) and again in a forked
        # child, whose main thread keeps the parent's Thread object and native_id.
        self.tids = {}          # Thread -> tid, every thread that recorded something
        self.names = {}         # tid -> thread name
        self.threads_written = set()
        self.process_written = None
        self.lock = _thread.allocate_lock()
        started = getattr(st, "started", None)
        if started is None:  # the events file's own computation (__init__._start_line)
            started = time.time() - (now() - st.t0)
        self.t0 = st.t0
        self.started_us = int(round(started * 1e6))


_b = None
_page = None


def start():
    """Called once, when torch is patched."""
    global _b, _current_thread
    if _b is not None:
        return
    import threading  # torch has imported it already
    _current_thread = threading.current_thread
    _b = _Buffer()
    atexit.register(_at_exit)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_forked)


def _forked():
    # The child's file is its own; the parent's buffered records stay the parent's.
    global _b
    try:
        _b = _Buffer()
    except Exception as exc:
        core.harness_error("trace fork", exc)
    return _b


def _at_exit():
    core.guard("trace at exit", flush)


def micros(at):
    """Wall-clock microseconds since the epoch of monotonic time `at`: the `start` event's
    `started` plus `t`, as events.jsonl gives it."""
    b = _b
    return b.started_us + int(round((at - b.t0) * 1e6))


# --- recording: the hot path --------------------------------------------------------------------

def complete(name, cat, start_at, end_at, args=None):
    """An X event from monotonic `start_at` to `end_at`."""
    _record("X", name, cat, start_at, end_at, args)


def _record(ph, name, cat, start_at, end_at, args):
    """A record of this process's thread, counted against MAX_EVENTS; `end_at` (for a counter,
    the sample's time) decides when the buffer is written."""
    b = _b
    if _CHECK_PID and os.getpid() != b.pid:
        b = _forked()
    if b.count >= MAX_EVENTS:
        _drop(b, end_at)
        return
    b.count += 1
    thread = _current_thread()
    tid = b.tids.get(thread)
    if tid is None:
        tid = _new_thread(b, thread)
    b.records.append((ph, name, cat, start_at, None if ph == "C" else end_at, tid, args))
    if b.eager or len(b.records) >= FLUSH_RECORDS or end_at - b.last_flush >= FLUSH_SECONDS:
        flush()


# --- training iterations ----------------------------------------------------------------------

_iteration = {"lead": None, "end": None, "since": -1, "first": None, "count": 0}
_EVALUATING = ("validate", "evaluate", "predict", "checkpoint")


def _transitions():
    from . import stages
    return sum(stages.seen.values())


def activity(at):
    """A batch wait, a forward or a backward began at `at`: the first since the last training
    iteration is where the next one begins; what evaluation does in between is not training."""
    it = _iteration
    if core.state.stage in _EVALUATING:
        it["first"] = None
    elif it["first"] is None:
        it["first"] = at


def step_ended(optimizer, end_at):
    """An optimizer's step() returned. For the first optimizer that stepped (a GAN's steps
    two), a `training step N` span: from the end of its previous step when the process stayed
    in stage train since, else from the first batch wait, forward or backward since (outside
    evaluation), to now."""
    import weakref
    it = _iteration
    lead = it["lead"]() if it["lead"] is not None else None
    if lead is None:
        it["lead"], lead = weakref.ref(optimizer), optimizer
    if optimizer is not lead:
        return
    now_seen = _transitions()
    start = it["first"]
    if it["end"] is not None and it["since"] == now_seen:
        start = it["end"]
    it["end"], it["since"], it["first"] = end_at, now_seen, None
    if start is not None and core.state.stage == "train":
        it["count"] += 1
        complete("training step %d" % it["count"], "step", start, end_at, {"index": it["count"]})


def counter(name, at, series):
    """A C event: `series` maps each series' name to a number."""
    _record("C", name, None, at, at, series)


def memory(at):
    """The process's resident memory, at most every MEMORY_INTERVAL."""
    b = _b
    if at - b.last_memory < MEMORY_INTERVAL:
        return
    b.last_memory = at
    rss = _rss()
    if rss is not None:
        counter("memory", at, {"rss": rss})


def in_worker():
    """A DataLoader worker writes each record at once, spawned or forked: torch may end it
    before its interpreter exits."""
    b = _b
    if b.worker_checked:
        return
    b.worker_checked = True
    if _worker_id() is not None:
        b.eager = True


def _drop(b, at):
    b.dropped += 1
    if b.eager or at - b.last_flush >= FLUSH_SECONDS:
        flush()


def _rss():
    global _page
    try:
        if _page is None:
            _page = os.sysconf("SC_PAGE_SIZE")
        fd = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
        try:
            return int(os.read(fd, 256).split()[1]) * _page
        finally:
            os.close(fd)
    except (OSError, ValueError, IndexError):
        return None


def _new_thread(b, thread):
    tid = _native_id()
    b.tids[thread] = tid
    b.names[tid] = str(getattr(thread, "name", "thread"))
    return tid


# --- writing ------------------------------------------------------------------------------------

def flush():
    """Writes the buffered records with one write()."""
    b = _b
    if b is None:
        return
    if os.getpid() != b.pid:
        _forked()  # Python 3.6: a child's first write; what the parent buffered is dropped
        return
    if not b.lock.acquire(False):
        return  # another thread is writing; it or the next flush takes these
    try:
        b.last_flush = now()
        n = len(b.records)
        records = b.records[:n]
        del b.records[:n]  # appends from other threads meanwhile stay for the next flush
        lines = _metadata(b)
        for record in records:
            try:
                lines.append(_line(b, record))
            except Exception as exc:
                core.harness_error("trace record", exc)
        if b.dropped > b.dropped_written:
            b.dropped_written = b.dropped
            lines.append(_json({"ph": "M", "name": "preflight_dropped", "pid": b.pid,
                                "tid": b.pid, "args": {"dropped": b.dropped}}))
        if lines:
            core.append(b.path, "".join(lines).encode("utf-8", "replace"))
    finally:
        b.lock.release()


def _line(b, record):
    ph, name, cat, start_at, end_at, tid, args = record
    ts = micros(start_at)
    if ph == "X":  # both ends rounded alike: spans nested in time stay nested in microseconds
        head = '{"ph":"X","name":%s,"cat":"%s","ts":%d,"dur":%d,"pid":%d,"tid":%d,"args":' % (
            _string(name[:MAX_NAME]), cat, ts, max(0, micros(end_at) - ts), b.pid, tid)
    else:
        head = '{"ph":"%s","name":%s,"ts":%d,"pid":%d,"tid":%d,"args":' % (
            ph, _string(name[:MAX_NAME]), ts, b.pid, tid)
    line = head + _value(args or {}) + "}\n"
    if len(line) > MAX_LINE // 4 and len(line.encode("utf-8", "replace")) > MAX_LINE:
        line = head + '{"truncated":true}}\n'  # a name is at most MAX_NAME characters
    return line


def _metadata(b):
    """process_name when it is new or changed (a rank joined a group), thread_name for each
    thread not named yet."""
    lines = []
    name = _process_name()
    if name != b.process_written:
        b.process_written = name
        lines.append(_json({"ph": "M", "name": "process_name", "pid": b.pid, "tid": b.pid,
                            "args": {"name": name[:MAX_NAME]}}))
    for tid, thread in list(b.names.items()):
        if tid not in b.threads_written:
            b.threads_written.add(tid)
            lines.append(_json({"ph": "M", "name": "thread_name", "pid": b.pid, "tid": tid,
                                "args": {"name": thread[:MAX_NAME]}}))
    return lines


def _process_name():
    worker = _worker_id()
    if worker is not None:
        return "DataLoader worker %d" % worker
    argv = getattr(sys, "argv", None) or core._argv()
    name = "python " + (os.path.basename(argv[0]) if argv and argv[0] else "")
    rank = _rank()
    return name if rank is None else "%s (rank %d)" % (name, rank)


def _worker_id():
    worker = sys.modules.get("torch.utils.data._utils.worker")
    try:
        info = worker.get_worker_info() if worker is not None else None
        return None if info is None else int(info.id)
    except Exception:
        return None


def _rank():
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    except Exception:
        pass
    rank = os.environ.get("RANK", "")
    return int(rank) if rank.isdigit() else None


# ensure_ascii=False then "replace" on writing: a lone surrogate becomes "?" (events.py).
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
_string = getattr(json.encoder, "c_encode_basestring", None) or json.encoder.encode_basestring


def _value(value, depth=0):
    """JSON of the values the hooks record (numbers, text, None, lists of them) without the
    encoder's per-call set-up, which costs more than the record; others go to the encoder."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return "%d" % value
    if kind is float:
        return repr(value) if value - value == 0 else "null"  # NaN and infinities: not JSON
    if value is None:
        return "null"
    if kind is list and depth < 3:
        return "[" + ",".join([_value(v, depth + 1) for v in value]) + "]"
    if kind is dict and depth < 3:
        parts = []
        for key, item in value.items():
            if type(key) is not str:
                return _encode(value)
            parts.append(_string(key) + ":" + _value(item, depth + 1))
        return "{" + ",".join(parts) + "}"
    return _encode(value)


def _json(event):
    return _encode(event) + "\n"
