"""One training step measured at the job's real batch size (docs/harness.md "Measuring a
step"): the memory its tensors need, its floating-point operations and its wall time, for the
GPU out-of-memory prediction and the cost estimate.

The step measured is the window between the ends of the first and second calls to step() of
the first optimizer that steps: a whole iteration (batch, forward, backward, every
optimizer's step) with the optimizer state already created. PyTorch's profiler records every
allocation and free of the CPU allocator in that window; with virtual GPUs the job's
"cuda" tensors live there, so the running total of those events is the GPU allocator's.
The profiler cannot see the free of memory allocated before it started: the previous batch
and gradients set to None are accounted for by hand, as freed when the first forward begins."""

import os
import sys
import time
import weakref

import preflight_harness as core
from . import frames

_m = {
    "lead": None,        # weakref to the optimizer whose steps delimit the window
    "lead_steps": 0,
    "profiler": None,    # the running torch.profiler.profile while the window is open
    "opened": 0.0,
    "live": 0,           # bytes of tensors alive when the window opened
    "done": False,
    "batch_bytes": 0,    # tensors of the last batch a DataLoader yielded
    "batch_size": None,
    "workers": 0,        # that loader's num_workers: its batches arrive in shared memory
    "batches": None,     # len() of that loader: batches per epoch, unclamped
    "prev_batch": 0,     # batch_bytes when the window opened
    "grads": {},         # id(parameter) -> (gradient storage, bytes) when the window opened
    "forward_marked": False,
}
_FORWARD_MARK = "preflight::forward"
_optimizers = weakref.WeakSet()
_models = weakref.WeakSet()


def note_optimizer(optimizer):
    _optimizers.add(optimizer)


def note_model(module):
    """A module called at the top level in training: its parameters and buffers stay on the
    GPU. The first such call in the window is marked on the profiler's clock."""
    if _m["done"]:
        return
    _models.add(module)
    if _m["profiler"] is not None and not _m["forward_marked"]:
        _m["forward_marked"] = True
        with sys.modules["torch"].profiler.record_function(_FORWARD_MARK):
            pass


def note_batch(batch, loader):
    """Called for each batch a DataLoader yields."""
    if _m["done"]:
        return
    sizes = []
    _m["batch_bytes"] = _tensor_bytes(batch, sizes)
    _m["batch_size"] = sizes[0] if sizes else None
    _m["workers"] = getattr(loader, "num_workers", 0) or 0
    try:
        _m["batches"] = len(loader)
    except Exception:
        _m["batches"] = None


def after_step(torch, optimizer, frame):
    """Called when an optimizer's step() returns."""
    if _m["done"]:
        return
    lead = _m["lead"]() if _m["lead"] is not None else None
    if lead is None:
        _m["lead"], lead = weakref.ref(optimizer), optimizer
    if optimizer is not lead:
        return
    _m["lead_steps"] += 1
    if _m["lead_steps"] == 1:
        _open(torch)
    elif _m["profiler"] is not None:
        _close(torch, frame)


def abandon():
    """At exit with the window still open (training ended after one step)."""
    profiler, _m["profiler"], _m["done"] = _m["profiler"], None, True
    if profiler is not None:
        try:
            profiler.__exit__(None, None, None)
        except Exception:
            pass


def _open(torch):
    from torch.profiler import profile, ProfilerActivity
    _m["live"] = _live_bytes(torch)
    _m["prev_batch"] = _m["batch_bytes"]
    _m["grads"] = _grad_storages(torch)
    probe = torch.empty(1)
    profiler = profile(activities=[ProfilerActivity.CPU], profile_memory=True, with_flops=True)
    profiler.__enter__()
    _m["profiler"], _m["opened"] = profiler, time.monotonic()
    # The first free of memory allocated before profiling began makes PyTorch's C++ log print
    # a warning to stderr, once per process: spent here, on a probe, with stderr muted for
    # that one call, so the job's output stays its own.
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        del probe
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _close(torch, frame):
    profiler = _m["profiler"]
    seconds = time.monotonic() - _m["opened"]
    _m["profiler"], _m["done"] = None, True
    profiler.__exit__(None, None, None)
    before, after, flops, ops = _replay(torch, profiler)
    # Unseen by the profiler, and all before the first forward: a batch from DataLoader
    # workers arrives in shared memory (a GPU copies it in); the previous batch is dropped
    # when the loop takes the new one; zero_grad(set_to_none=True) drops the gradients.
    arrived = _m["batch_bytes"] if _m["workers"] > 0 else 0
    now = _grad_storages(torch)
    regrown = sum(size for key, (storage, size) in _m["grads"].items()
                  if key in now and now[key][0] != storage)
    dropped = _m["prev_batch"] + regrown
    step_bytes = _m["prev_batch"] + max(before + arrived, after + arrived - dropped, 0)
    core.emit("step_measure", seconds=round(seconds, 6), flops=flops, ops=ops,
              live_bytes=_m["live"], step_bytes=step_bytes, replicas=_replicas(torch),
              batch_size=_m["batch_size"], batches_per_epoch=_m["batches"],
              stage=core.state.stage, where=frames.where(frame))


def _replay(torch, profiler):
    """The running total of allocations in the window: its peak before and from the first
    forward (the whole window when there was none), FLOPs and top-level operators."""
    results = profiler.profiler.kineto_results
    allocation = torch._C._profiler._EventType.Allocation
    changes = []
    forward_at = None
    ops = 0
    todo = list(results.experimental_event_tree())
    while todo:
        event = todo.pop()
        if event.tag == allocation:
            changes.append((event.start_time_ns, event.extra_fields.alloc_size))
            continue
        if event.name == _FORWARD_MARK:
            forward_at = event.start_time_ns
        elif event.parent is None:
            ops += 1  # a top-level operator: on a GPU, one or a few kernel launches
        todo.extend(event.children)
    changes.sort()
    total = before = after = 0
    for at, size in changes:
        total += size
        if forward_at is None or at >= forward_at:
            after = max(after, total)
        else:
            before = max(before, total)
    flops = 0
    for event in profiler.events():
        flops += getattr(event, "flops", 0) or 0
    return before, after, int(flops), ops


def _optimized_params():
    for optimizer in list(_optimizers):
        for group in optimizer.param_groups:
            for param in group.get("params", ()):
                yield param


def _grad_storages(torch):
    found = {}
    for param in _optimized_params():
        grad = getattr(param, "grad", None)
        storage = _storage(grad) if isinstance(grad, torch.Tensor) else None
        if storage is not None:
            found[id(param)] = storage
    return found


def _live_bytes(torch):
    """Bytes of every distinct storage of the models' parameters, buffers and gradients and
    the optimizers' state: what stays on the GPU between steps."""
    seen = {}

    def add(tensor):
        if not isinstance(tensor, torch.Tensor):
            return
        storage = _storage(tensor)
        if storage is not None:
            seen[storage[0]] = storage[1]

    for module in list(_models):
        for tensor in list(module.parameters()) + list(module.buffers()):
            add(tensor)
            add(getattr(tensor, "grad", None))
    for param in _optimized_params():
        add(param)
        add(getattr(param, "grad", None))
    for optimizer in list(_optimizers):
        for values in optimizer.state.values():
            for value in (values.values() if isinstance(values, dict) else ()):
                add(value)
    return sum(seen.values())


def _storage(tensor):
    try:
        storage = tensor.untyped_storage() if hasattr(tensor, "untyped_storage") \
            else tensor.storage()
        size = storage.nbytes() if hasattr(storage, "nbytes") \
            else storage.size() * storage.element_size()
        return storage.data_ptr(), size
    except Exception:
        return None


def _tensor_bytes(batch, sizes, depth=0):
    """Bytes of the tensors in a batch (nested lists, tuples, dicts); `sizes` collects their
    first dimensions."""
    torch = sys.modules.get("torch")
    if torch is None or depth > 4:
        return 0
    if isinstance(batch, torch.Tensor):
        if batch.dim() > 0:
            sizes.append(int(batch.shape[0]))
        return batch.numel() * batch.element_size()
    if isinstance(batch, dict):
        batch = list(batch.values())
    if isinstance(batch, (list, tuple)):
        return sum(_tensor_bytes(item, sizes, depth + 1) for item in batch[:64])
    return 0


def _replicas(torch):
    """Devices a DataParallel model splits each batch over (1 without one)."""
    for module in list(_models):
        if isinstance(module, torch.nn.DataParallel):
            ids = getattr(module, "device_ids", None) or []
            return max(1, len(ids))
    return 1
