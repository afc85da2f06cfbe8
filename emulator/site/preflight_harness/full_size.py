"""The job's own batch size, on shape-only tensors (docs/harness.md "Sampling the batch").

At the first batch of each DataLoader loop whose batch is above PREFLIGHT_BATCH (S, 2 by
default), a child is forked that runs the loop's first iteration at the job's own batch size
on PyTorch 2's fake tensors (FakeTensorMode: shapes, dtypes and devices, no data): the job's
own code (its forward, its loss, backward) runs at full size in a fraction of a second and in
little memory, whatever the batch. The child measures the step as measure.py does (memory
model and FLOPs) until the optimizer's step begins or the loop's next batch comes, or an
uncaught exception ends it. Its events go through a pipe to the parent, which waits for it and
writes one `full_size` event: how far it got, the exception that ended it, the values it had
to make up. Nothing the child does reaches the job: it has its own memory, and never returns.

Then the parent decides. A step that would cost more here than SAMPLE_FLOPS, or hold more
than SAMPLE_BYTES, is sampled: every batch of that loader is cut to its first S items (a
`clamp` of kind "batch"), and the step measured is the child's, at full size. A cheap step
runs at the job's own size, as if nothing had happened: its values (a loss that turns NaN at
the third step) are the job's own.

A small model's loop is probed before it is checked: a child runs the loop's first iteration
for real on the batch's first S items (on one thread: the parent's OpenMP threads are not in a
forked child), and when that step, scaled to the job's batch, is within the bounds, the loop
runs at the job's own size with no check. On fake tensors every operator goes through
the fake mode's dispatch in Python: a check cost a small example's loop 0.1 to 0.5 s, more than
its real step at S. A probe that fails, takes longer than PROBE_TIMEOUT or sees a costly step
leaves the decision to the check.

What fake tensors cannot answer (a value read, `torch.nonzero`) is made up as shape_only.py
says, and each made-up value is reported with its line. A model already shape-only
(shape_only.py) needs no check: its own step runs at full size."""

import json
import os
import select
import signal
import sys
import time

import preflight_harness as core
from . import clamp, frames, shape_only, virtual_gpu

TIMEOUT = 60.0          # seconds the parent waits for a child
PROBE_TIMEOUT = 2.0     # seconds it waits for a probe, whose step at S is a cheap one's
# The most bytes of parameters and buffers a model may have for its loops to be probed: a
# larger model's real step, even at S, costs more than its check on fake tensors (ResNet-50,
# 102 MB, at 224 px: 24 GFLOP for two images; a 124M-parameter decoder: 1.5 TFLOP for two
# sequences of 1,024 tokens). ResNet-18 has 47 MB.
PROBE_BYTES = 64 << 20
# Above these, the job's own step is too costly to run here: a step of 20 GFLOP (forward and
# backward) takes about a second on two cores, and a dry run takes ten of them.
# PREFLIGHT_SAMPLE_FLOPS replaces the first (tests sample small steps with 0).
SAMPLE_FLOPS = 20e9
SAMPLE_BYTES = 2 << 30
# Tokens a sampled sequence keeps, when the sampled batch alone would still cost too much.
SEQUENCE = 32

_state = {
    "child": None,      # in the child: {"fd": pipe, "made_up": [...]}
    "probed": set(),    # (file, line) of the loops whose first iteration ran at full size
    "unavailable": None,  # why this torch cannot run shape-only tensors, once known
    "cheap": [],        # (values, flops, bytes) of each loop with grad found cheap at full size
}


def sample_size():
    """PREFLIGHT_BATCH: the batch the dry run trains on when the job's own costs too much; 0
    when batches are never sampled."""
    try:
        size = int(os.environ.get("PREFLIGHT_BATCH", "0"))
    except ValueError:
        return 0
    st = core.state
    if size <= 0 or st.steps <= 0 or st.phase == "setup":
        return 0
    return size


def shape_only_support(torch):
    """None when this torch has fake tensors the child can use (PyTorch 2.1+), else why not.

    Asked first where fake tensors are about to be used (a child about to be forked, a model
    about to turn shape-only), it makes one fake mode in this process: the first FakeTensorMode
    imports torch._dynamo, sympy and the decompositions (0.7 s on PyTorch 2.6), which every
    child would otherwise import again for its loop. A job that built a torch.optim optimizer
    has them already (its constructor imports torch._dynamo)."""
    if _state["unavailable"] is None:
        why = ""
        try:
            version = torch.__version__
            if tuple(int(part) for part in version.split(".")[:2]) < (2, 1):
                why = "PyTorch %s has no shape-only tensors (FakeTensorMode, PyTorch 2.1+)" % version
            else:
                from torch._subclasses.fake_tensor import FakeTensorMode
                FakeTensorMode(allow_non_fake_inputs=True)  # entered nowhere: no tensor is made
        except Exception as exc:
            why = "PyTorch %s: shape-only tensors unavailable (%s)" % (torch.__version__, exc)
        _state["unavailable"] = why
    return _state["unavailable"] or None


def in_child():
    return _state["child"] is not None


def on_batch(batch, loader, index, frame):
    """A batch a DataLoader loop yields (the `index`-th, from 1): a sampled loader's is cut to
    its sample; a loop's first is checked at full size first."""
    if hasattr(loader, "_preflight_batch"):
        return sample(batch, loader)
    return _first_batch(batch, loader, frame) if index == 1 else batch


def _first_batch(batch, loader, frame):
    """The first batch of a DataLoader loop: checked at full size, and sampled when its step
    costs too much. Returns the batch the caller goes on with: the job's (or its sample) in
    the parent, the full-size fake one in the child."""
    size = sample_size()
    items = _items(batch)
    if in_child() or shape_only.active() or not size or items is None or items <= size or not _may_fork():
        return batch
    where = frames.where(frame)
    key = (where["file"], where["line"]) if where else None
    if key in _state["probed"]:
        return batch
    _state["probed"].add(key)
    torch = sys.modules["torch"]
    why = shape_only_support(torch)
    if why:
        if len(_state["probed"]) == 1:
            core.emit("full_size", reached="unavailable", why=why, batch=items, sampled=None, where=where)
        return batch
    values = _values(batch)
    if _bounded_by_cheap_loop(torch, values, items, where):
        return batch
    if _may_probe():
        started = time.monotonic()
        pid, fd, child_batch = _fork(batch, items, size, True)
        if not pid:
            return child_batch  # the probe goes on with the job's loop
        if _cheap_at_sample(_collect(pid, fd, PROBE_TIMEOUT), items, size, where, started, values):
            return batch
    started = time.monotonic()
    pid, fd, child_batch = _fork(batch, items, size, False)
    if not pid:
        return child_batch
    lines, timed_out = _collect(pid, fd, TIMEOUT)
    costly, flops = _report(lines, timed_out, time.monotonic() - started, items, size, where, values)
    if not costly:
        return batch
    length = _sequence_length(batch) if flops * size / items > _flops_limit() else None
    loader._preflight_batch = (items, size, length)
    clamp.report("DataLoader batch", items, size, where, kind_of="batch")
    if length:
        clamp.report("DataLoader sequence", length, SEQUENCE, where, kind_of="batch")
    indices = getattr(loader, "batch_sampler", None)
    if indices is not None:  # its next loops fetch only the items they keep
        object.__setattr__(loader, "batch_sampler", _CutBatches(indices, size))
    return sample(batch, loader)


class _CutBatches(object):
    """A loader's batch sampler whose batches keep their first `size` indices: the loader
    fetches (reads, decodes) only the items the sampled run trains on. Its length, and so the
    loader's, stays the job's."""

    def __init__(self, batches, size):
        self.batches, self.size = batches, size

    def __iter__(self):
        for batch in self.batches:
            yield batch[:self.size]

    def __len__(self):
        return len(self.batches)

    def __getattr__(self, name):
        if name == "batches":
            raise AttributeError(name)
        return getattr(self.batches, name)


def sample(batch, loader):
    """A batch of a sampled loader cut to its first S items (and its sequences to their first
    SEQUENCE tokens)."""
    _, size, length = loader._preflight_batch
    items = _items(batch)
    return _cut(batch, items, size, length) if items is not None and items >= size else batch


def _sequence_length(batch):
    """T when the batch's integer tensors of two dimensions (token ids, their targets, an
    attention mask) are all (items, T), with one T above SEQUENCE: then the sequence is
    unambiguous, and a sampled one keeps its first SEQUENCE tokens. None otherwise."""
    torch = sys.modules["torch"]
    lengths = set()

    def leaf(value):
        if isinstance(value, torch.Tensor):
            if value.dim() == 2 and not (value.is_floating_point() or value.is_complex()):
                lengths.add(int(value.shape[1]))
            return value
        return None

    shape_only.mapped(batch, leaf)
    length = lengths.pop() if len(lengths) == 1 else None
    return length if length is not None and length > SEQUENCE else None


def _values(batch):
    """How many values the batch's tensors hold together."""
    torch = sys.modules["torch"]
    total = [0]

    def leaf(value):
        if isinstance(value, torch.Tensor):
            total[0] += value.numel()
            return value
        return None

    shape_only.mapped(batch, leaf)
    return total[0]


def _items(batch):
    """The batch's size: the first dimension of its first tensor (measure.py's walk)."""
    from . import measure
    sizes = []
    measure.batch_storages(batch, sizes, {})
    return sizes[0] if sizes else None


def _cut(batch, items, size, length=None):
    """Every tensor of `items` rows cut to its first `size`, and a list of `items` plain
    values (file names, captions) too; with `length`, the integer (items, length) tensors to
    their first SEQUENCE tokens."""
    torch = sys.modules["torch"]

    def leaf(value):
        if isinstance(value, torch.Tensor):
            if value.dim() == 0 or value.shape[0] != items:
                return value
            if length and value.dim() == 2 and value.shape[1] == length and \
                    not (value.is_floating_point() or value.is_complex()):
                return value[:size, :SEQUENCE].contiguous()  # as the job's own tensors are
            return value[:size]
        if isinstance(value, list) and len(value) == items and \
                all(isinstance(x, (str, bytes, int, float)) for x in value):
            return value[:size]
        return None

    return shape_only.mapped(batch, leaf)


def _may_fork():
    """Only the main thread of a process that is not a DataLoader worker, outside a
    distributed group: a child sharing the group's connections would disturb the other ranks."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.current_thread() is not threading.main_thread():
        return False
    data = sys.modules.get("torch.utils.data")
    if data is not None and data.get_worker_info() is not None:
        return False
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            return False
    except Exception:
        return False
    return hasattr(os, "fork")


# --- the parent -------------------------------------------------------------------------

def _fork(batch, items, size, probe):
    """(pid, the pipe's end, None) in the parent; in the child (0, None, the batch its loop goes
    on with): for the loop's first iteration full size on fake tensors or, as a `probe`, real at
    `size`."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            return 0, None, _become_child(batch, items, size, probe, write_end)
        except BaseException as exc:
            core.harness_error("full size", exc)
            os._exit(3)
    os.close(write_end)
    return pid, read_end, None


def _may_probe():
    """Whether the loop's first iteration is probed at the sample's size first: not when a
    model this large costs more at S than its check, nor when every step is costly."""
    from . import measure
    return measure.parameter_bytes() <= PROBE_BYTES and _flops_limit() > 0


def _remember_cheap(values, flops, nbytes):
    """A loop run with grad, whose first iteration at full size is cheap: a bound for the loops
    without grad after it (_bounded_by_cheap_loop)."""
    torch = sys.modules["torch"]
    if torch.is_grad_enabled() and values:
        _state["cheap"].append((values, flops, nbytes))


def _bounded_by_cheap_loop(torch, values, items, where):
    """True when the loop runs without grad (a validation under torch.no_grad) and a loop with
    grad was found cheap before it: the same model's forward alone costs no more, value for
    value of its batch, than its training step did, so that step's FLOPs and bytes scaled by
    the two batches' values bound this one's. Within the bounds, the loop runs at the job's own
    size unchecked, and a `full_size` event says so (`reached: "bound"`, the FLOPs' bound). A
    loop with grad, or larger than the bound allows, is probed or checked as any other."""
    if torch.is_grad_enabled() or not values:
        return False
    for cheap_values, flops, nbytes in _state["cheap"]:
        scale = float(values) / cheap_values
        if flops * scale <= _flops_limit() and nbytes * scale <= SAMPLE_BYTES:
            core.emit("full_size", reached="bound", batch=items, sampled=None, where=where, seconds=0.0,
                      made_up=[], flops=int(flops * scale))
            return True
    return False


def _cheap_at_sample(collected, items, size, where, started, values):
    """True when the probe's step (its event lines and whether it ran out of time), scaled to
    the job's batch, is cheap; then a `full_size` event says so (`reached: "probe"`, the FLOPs
    scaled)."""
    from . import measure
    lines, timed_out = collected
    end = next((line for line in lines if line.get("ev") == "probe_end"), None)
    figures = end.get("measured") if end else None
    if timed_out or not figures or any(line.get("ev") in ("exception", "harness_error") for line in lines):
        return False
    # A layer's FLOPs and activations are its batch's, item by item: the scaled step is the
    # check's, but for allocations the caching allocator rounds up, which scale up with it.
    scale = float(items) / size
    flops = figures.get("flops", 0) * scale
    nbytes = measure.full_size_bytes(figures, scale)
    if flops > _flops_limit() or nbytes > SAMPLE_BYTES:
        return False
    _remember_cheap(values, flops, nbytes)
    core.emit("full_size", reached="probe", batch=items, sampled=None, where=where,
              seconds=round(time.monotonic() - started, 6), made_up=[], flops=int(flops))
    return True


def _collect(pid, fd, timeout):
    """The child's event lines, until it exits or its time is up (then it is killed)."""
    deadline = time.monotonic() + timeout
    chunks, timed_out, exited = [], False, False
    while True:
        if not exited:
            exited = os.waitpid(pid, os.WNOHANG)[0] == pid
        ready = select.select([fd], [], [], 0 if exited else 0.1)[0]
        if ready:
            data = os.read(fd, 1 << 16)
            if data:
                chunks.append(data)
                continue
            break  # every writer closed
        if exited:
            break  # drained; a grandchild may still hold the pipe open
        if time.monotonic() > deadline:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            exited = True
            break
    if not exited:  # the pipe's end came first: the child closes it only as it exits
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass  # the job's own os.wait() took it
    os.close(fd)
    lines = []
    for text in b"".join(chunks).decode("utf-8", "replace").splitlines():
        try:
            lines.append(json.loads(text))
        except ValueError:
            continue
    return lines, timed_out


def _report(lines, timed_out, seconds, full, size, where, values):
    """The child's outcome as a `full_size` event; True when the loop is to be sampled: its
    step at full size costs too much here, or ran past the child's time."""
    from . import measure
    end = next((line for line in lines if line.get("ev") == "probe_end"), None)
    failure = next((line for line in lines if line.get("ev") == "exception"), None)
    figures = end.get("measured") if end else None
    reached = "timeout" if timed_out else end["reached"] if end else "killed"
    flops = figures.get("flops", 0) if figures else 0
    nbytes = measure.full_size_bytes(figures) if figures else 0
    costly = timed_out or bool(figures) and (flops > _flops_limit() or nbytes > SAMPLE_BYTES)
    if figures and not costly and failure is None:
        _remember_cheap(values, flops, nbytes)
    fields = dict(reached=reached, batch=full, sampled=size if costly else None, where=where,
                  seconds=round(seconds, 6), made_up=end.get("made_up", []) if end else [])
    if failure is not None:
        fields["exception"] = {k: failure.get(k) for k in ("type", "message", "stage", "frames")}
        fields["shape_only"] = _shape_only_limit(failure.get("type", ""), failure.get("message") or "")
    if figures and figures.get("backwards"):
        fields["flops"] = figures.get("flops")
        if costly:
            measure.full_size_measured(figures, full, size)
    core.emit("full_size", **fields)
    return costly, flops


def _flops_limit():
    try:
        return float(os.environ.get("PREFLIGHT_SAMPLE_FLOPS", SAMPLE_FLOPS))
    except ValueError:
        return SAMPLE_FLOPS


def _shape_only_limit(type_name, message):
    """An exception of the check itself, not of the job: of fake tensors (a value or an
    operator they cannot give), or autograd's refusal to run backward in a child forked after
    the parent's first backward (a second training loop: fine-tuning after pre-training)."""
    return type_name.startswith("torch._subclasses.") or \
        "autograd's threading in combination with fork-based multiprocessing" in message


# --- the child --------------------------------------------------------------------------

def _become_child(batch, items, size, probe, fd):
    """The loop goes on in this child with the batch it returns: the job's own batch on fake
    tensors, or for a probe the batch's first `size` items, real."""
    torch = sys.modules["torch"]
    st = core.state
    st.trace = None
    child = _state["child"] = {"fd": fd, "made_up": []}
    core.append = _write_to_parent
    quiet = os.open(os.devnull, os.O_WRONLY)  # the job's prints and tracebacks are the parent's
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    os.close(quiet)
    # The job's DataLoader workers are the parent's: an iterator this child releases (an
    # exception unwinding the loop) would shut them down, and the parent would wait for its
    # next batch for ever. PyTorch's flag for an interpreter on its way out makes that shutdown
    # nothing here.
    utils = sys.modules.get("torch.utils.data._utils")
    if utils is not None:
        utils.python_exit_status = True
    if probe:
        torch.set_num_threads(1)  # the parent's OpenMP threads are not in this process
        out = _cut(batch, items, size)
    else:
        out = _fake(torch, shape_only.enter(torch, child["made_up"]), batch)

    def excepthook(tp, value, tb):
        from . import report
        core.guard("full size", report.uncaught, value, tb, "excepthook")
        end("exception", 1)

    sys.excepthook = excepthook
    import atexit
    atexit.register(end, "exit")
    from . import measure
    if virtual_gpu.count() > 0:
        measure.efficient_attention(torch)  # the platform's GPU runs the fused kernels
    measure.open_full_size(torch)
    return out


def end(reached, code=0):
    """The child's iteration is over: say how far it got, and leave without running anything
    of the job's (its `finally` blocks, its atexit handlers)."""
    child = _state["child"]
    try:
        from . import measure
        figures = core.guard("full size", measure.full_size_figures)
        core.emit("probe_end", reached=reached, made_up=child["made_up"], measured=figures)
    finally:
        os._exit(code)


def _write_to_parent(path, data):
    """core.append in the child: every event goes down the pipe, blocking, whole."""
    fd = _state["child"]["fd"]
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fake(torch, mode, batch):
    """The batch with each tensor turned into a fake one of its shape."""
    return shape_only.mapped(batch, lambda value: mode.from_tensor(value)
                             if isinstance(value, torch.Tensor) else None)
