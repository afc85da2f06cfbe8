"""One training step measured at the job's real batch size (docs/harness.md "Measuring a
step"): the GPU memory it would hold on the platform, its floating-point operations and its
wall time, for the GPU out-of-memory prediction and the cost estimate.

The step measured is the window between the ends of the first and second calls to step() of
the first optimizer that steps: a whole iteration (batch, forward, backward, every
optimizer's step) with the optimizer state already created. The memory is a model of what
the platform's GPU would hold, built from tensor sizes only, so that it does not move with
the CPU kernels of the machine the dry run happens on: the tensors kept between steps
(parameters, buffers, gradients, optimizer state), the batch, and the activations autograd
saves for backward (seen through torch.autograd.graph.saved_tensors_hooks, one count per
storage), each allocation rounded and packed as PyTorch's CUDA caching allocator does. The
FLOPs are counted from the shapes of the layers called (convolutions, linear layers,
recurrent layers, attention), not by a profiler, so the step runs at its own speed."""

import os
import sys
import time
import weakref

import preflight_harness as core
from . import frames, full_size, layers, loop_cut, shape_only

# PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, the same in 1.x and
# 2.x): every block is a multiple of 512 bytes; blocks of 1 MiB or less come from 2 MiB
# segments; larger ones under 10 MiB from 20 MiB segments; 10 MiB and more get a segment of
# their own, rounded up to 2 MiB. The GPU runs out of memory when a new segment does not fit.
BLOCK = 512               # kMinBlockSize
SMALL = 1 << 20           # kSmallSize: largest block of the small pool
SMALL_SEGMENT = 2 << 20   # kSmallBuffer
LARGE_SEGMENT = 20 << 20  # kLargeBuffer: shared by blocks over 1 MiB and under 10 MiB
MIN_LARGE_ALLOC = 10 << 20  # kMinLargeAlloc
ROUND_LARGE = 2 << 20     # kRoundLarge
# Kernels a layer call launches in a training step: its forward, and in backward the
# gradients of its input and of its weights. An optimizer's step launches a few per
# parameter tensor (the single-tensor loops, PyTorch's default before 2.0).
KERNELS_PER_LAYER = 3
KERNELS_PER_PARAMETER = 4
# Backward's own working set at its peak: the gradient arriving at a layer and the one it
# passes on, each at most the size of the largest activation saved.
BACKWARD_GRADIENTS = 2
# And an optimizer's step: temporaries of one parameter tensor's size (Adam's denominator and
# update) while activations are gone.
STEP_TEMPORARIES = 2

_m = {
    "lead": None,        # weakref to the optimizer whose steps delimit the window
    "lead_steps": 0,
    "open": False,
    "opened": 0.0,
    "opened_at": 0.0,    # the same moment as the trace sees it (the step's end)
    "done": False,
    "batch": {},         # storage -> bytes of the last batch a DataLoader yielded
    "batch_size": None,
    "batches": None,     # len() of that loader: batches per epoch, unclamped
    "full": None,        # the step at the job's own batch size, from full_size.py's child
}
_optimizers = weakref.WeakSet()
_models = weakref.WeakSet()


class Segments(object):
    """A set of allocations as the caching allocator would hold them: how many bytes of GPU
    memory its segments take."""
    __slots__ = ("small", "medium", "large")

    def __init__(self, other=None):
        self.small, self.medium, self.large = (other.small, other.medium, other.large) \
            if other is not None else (0, 0, 0)

    def add(self, nbytes, sign=1):
        if nbytes <= 0:
            return  # an empty tensor allocates nothing
        block = -(-nbytes // BLOCK) * BLOCK
        if block <= SMALL:
            self.small += sign * block
        elif block < MIN_LARGE_ALLOC:
            self.medium += sign * block
        else:
            self.large += sign * (-(-block // ROUND_LARGE) * ROUND_LARGE)

    def merged(self, other):
        out = Segments(self)
        out.small += other.small
        out.medium += other.medium
        out.large += other.large
        return out

    def reserved(self):
        return (-(-self.small // SMALL_SEGMENT) * SMALL_SEGMENT
                + -(-self.medium // LARGE_SEGMENT) * LARGE_SEGMENT + self.large)


class _Window(object):
    """What the open window has seen: the activations autograd holds, their peak, and the
    layers called."""

    def __init__(self, torch):
        self.torch = torch
        # Storage -> bytes, kept between steps, and a weak reference to a tensor of each: a
        # storage freed since (a gradient zero_grad() dropped) may be followed at its address
        # by an activation, which is no longer what was kept.
        self.kept_alive = {}
        self.kept = _kept_storages(torch, self.kept_alive)
        self.saved = {}                # storage -> [holders alive, bytes]
        self.saved_segments = Segments()
        self.largest_saved = 0
        self.peak = 0                  # the most the GPU would hold, in bytes of segments
        self.base = Segments()         # kept + batch, the floor of every moment
        self.flops = 0
        self.layer_calls = 0
        self.hooks = None
        self.forward_hook = None
        self.pre_hook = None
        self.stance = None             # torch.compiler.set_stance("force_eager"), undone at close
        self.parts = layers.StepParts(torch)  # the step part by part, for benchmarks
        # Tracing (trace.py): each layer's call as a span, and the modelled GPU memory.
        self.trace = None
        self.names = {}                # id(module) -> its qualified name in its model
        self.starts = []               # (module, when its forward began), innermost last
        self.sampled = None            # (allocated, peak) last written to the trace
        self.backwards = 0             # backward() calls: micro-batches, with gradient accumulation
        # The real tensors converted to fake ones (shape_only.Conversions): a fake storage
        # saved is judged by the real one it stands for.
        self.conversions = shape_only.conversions()
        # In full_size.py's child: the activations saved at each new high, for the parent's
        # own memory kept (Highs).
        self.highs = None
        self.attention = 0             # depth of attention calls modelled as the GPU's kernels

    def rebase(self, batch):
        base = Segments()
        for nbytes in self.kept.values():
            base.add(nbytes)
        for key, nbytes in batch.items():
            if key not in self.kept:
                base.add(nbytes)
        self.base = base

    def pack(self, tensor):
        try:
            holder = _Saved(self, tensor.detach())
        except Exception:
            return tensor
        core.guard("saved tensor", self._hold, holder)
        return holder

    def _hold(self, holder):
        if self.attention:
            return  # what the CPU's attention keeps; efficient_attention() counts the GPU's
        storage = _storage(holder.tensor)
        if storage is None:
            return
        key, nbytes = storage
        source = self.conversions.source(key)
        if self.not_activation(key) or (source is not None and self.not_activation(source)):
            return
        holder.key = key
        entry = self.saved.get(key)
        if entry is not None:
            entry[0] += 1
            return
        self.saved[key] = [1, nbytes]
        self.saved_segments.add(nbytes)
        self.largest_saved = max(self.largest_saved, nbytes)
        if self.highs is not None:
            self.highs.note(self.saved_segments, self.largest_saved)
        # Were backward to start now: every saved activation alive, and the gradients it
        # passes along.
        backward = self.base.merged(self.saved_segments)
        for _ in range(BACKWARD_GRADIENTS):
            backward.add(self.largest_saved)
        self.peak = max(self.peak, backward.reserved())

    def not_activation(self, key):
        """The storage is kept between steps (a parameter, a gradient, an optimizer's state) or
        the batch's."""
        return (key in self.kept and self.still_kept(key)) or key in _m["batch"]

    def still_kept(self, key):
        alive = self.kept_alive.get(key)
        return alive is None or alive() is not None

    def release(self, key):
        entry = self.saved.get(key)
        if entry is None:
            return
        entry[0] -= 1
        if entry[0] == 0:
            del self.saved[key]
            self.saved_segments.add(entry[1], -1)

    def is_layer(self, module):
        # A layer computes by itself: a leaf, or attention, which computes with its
        # projections' weights without calling them.
        return not module._modules or isinstance(module, self.torch.nn.MultiheadAttention)

    def layer_called(self, module, inputs, output):
        ended = time.perf_counter()
        end = self.trace.now() if self.trace is not None else None
        if not self.is_layer(module):
            return  # counted in its layers
        trained = self.torch.is_grad_enabled()
        flops = _layer_flops(self.torch, module, inputs, output)
        self.flops += flops * (3 if trained else 1)  # backward: input and weight gradients
        self.layer_calls += KERNELS_PER_LAYER if trained else 1
        self.parts.layer_ended(module, inputs, output, ended, flops)
        if self.trace is not None:
            self.layer_traced(module, inputs, flops, end)

    def layer_starting(self, module, inputs):
        if self.trace is not None and self.is_layer(module):
            self.starts.append((module, self.trace.now()))
        self.parts.layer_starting(module)

    def layer_traced(self, module, inputs, flops, end):
        start = None
        while self.starts:  # entries above this layer's are calls that raised
            called, at = self.starts.pop()
            if called is module:
                start = at
                break
        if start is None:
            return
        tensor = self.torch.Tensor
        shapes = [[int(n) for n in x.shape] for x in inputs[:4] if isinstance(x, tensor)]
        kind = type(module).__name__
        self.trace.complete(self.names.get(id(module)) or kind, "layer", start, end,
                            {"type": kind, "input_shapes": shapes, "flops": int(flops)})
        self.trace_gpu(end)

    def trace_gpu(self, at, peak=None):
        """The modelled GPU memory as a trace counter, when it changed: what is held now
        (kept, the batch, the activations alive) and the peak so far."""
        allocated = self.base.merged(self.saved_segments).reserved()
        sample = (allocated, max(allocated, self.peak if peak is None else peak))
        if sample != self.sampled:
            self.sampled = sample
            self.trace.counter("virtual GPU", at, {"allocated": sample[0], "peak": sample[1]})


class _Saved(object):
    """A tensor autograd saved for backward, as our pack hook hands it over; its release
    (the graph freed after backward) is the activation's free."""
    __slots__ = ("window", "tensor", "key")

    def __init__(self, window, tensor):
        self.window, self.tensor, self.key = window, tensor, None

    def __del__(self):
        if self.key is not None:
            try:
                self.window.release(self.key)
            except Exception:
                pass


def _unpack(holder):
    return holder.tensor if isinstance(holder, _Saved) else holder


def note_optimizer(optimizer):
    _optimizers.add(optimizer)


def note_model(module):
    """A module called at the top level in training: its parameters and buffers stay on the
    GPU."""
    if not _m["done"]:
        _models.add(module)


def note_batch(batch, loader):
    """Called for each batch a DataLoader yields."""
    if _m["done"]:
        return
    sizes, storages = [], {}
    batch_storages(batch, sizes, storages)
    _m["batch"] = storages
    _m["batch_size"] = sizes[0] if sizes else None
    try:
        _m["batches"] = len(loader)
    except Exception:
        _m["batches"] = None
    window = _m["open"]
    if window:
        window.rebase(storages)


def before_step(optimizer):
    """Called when an optimizer's step() begins."""
    if full_size.in_child():
        full_size.end("step")  # forward and backward ran at full size; the step is the parent's
    window = _m["open"]
    if window:
        window.parts.optimizer_started(optimizer)


def loading(change):
    """A DataLoader fetching a batch in this process (`change` 1 as it starts, -1 as it ends):
    the dataset's ops are the data pipeline's, timed on its own, not parts of the step."""
    window = _m["open"]
    if window:
        window.parts.quiet = max(0, window.parts.quiet + change)


def note_backward():
    window = _m["open"]
    if window:
        window.backwards += 1


def after_step(torch, optimizer, frame, at):
    """Called when an optimizer's step() returns, at monotonic time `at` (which also ends the
    step's spans in the trace)."""
    if _m["done"]:
        return
    window = _m["open"]
    if window:
        window.parts.optimizer_ended(optimizer)
    lead = _m["lead"]() if _m["lead"] is not None else None
    if lead is None:
        _m["lead"], lead = weakref.ref(optimizer), optimizer
    if optimizer is not lead:
        return
    _m["lead_steps"] += 1
    if _m["lead_steps"] == 1:
        if os.environ.get("PREFLIGHT_MEASURE", "1") == "0":
            _m["done"] = True  # benchmarks/measure.sh: the same job without the measurement
            return
        _open(torch, at)
    elif _m["open"]:
        _close(torch, frame, at)


def abandon():
    """At exit with the window still open (training ended after one step)."""
    _m["done"] = True
    _stop()


class Highs(object):
    """The activations saved at the moments backward could start with the most alive, as
    segments: the child sends them, and the parent, which knows the memory kept between steps
    (the optimizer's state exists only after its first step), finds the peak over them. A
    moment is kept when its own total is a new high."""
    __slots__ = ("moments", "top")

    def __init__(self):
        self.moments, self.top = [], -1

    def note(self, saved, largest):
        total = saved.small + saved.medium + saved.large + BACKWARD_GRADIENTS * largest
        if total > self.top:
            self.top = total
            self.moments.append([saved.small, saved.medium, saved.large, largest])

    @staticmethod
    def peak(moments, base):
        top = 0
        for small, medium, large, largest in moments:
            moment = Segments(base)
            moment.small += small
            moment.medium += medium
            moment.large += large
            for _ in range(BACKWARD_GRADIENTS):
                moment.add(largest)
            top = max(top, moment.reserved())
        return top


def open_full_size(torch):
    """In full_size.py's child, at its full-size batch: its forward and backward are measured
    until the optimizer's step begins (or the loop's next batch)."""
    _m["done"] = False
    _open(torch, time.monotonic())
    window = _m["open"]
    if window:
        window.highs = Highs()


def efficient_attention(torch):
    """On the platform's GPU, scaled_dot_product_attention (and nn.MultiheadAttention, which
    calls it) runs a fused kernel (FlashAttention, or the memory-efficient one, which takes any
    mask and float32) that keeps for backward its inputs, its output and one float32 log-sum-exp
    per query and head; the CPU's path keeps the whole matrix of attention probabilities (and a
    dropout mask). In the full-size child, with virtual GPUs, the window counts the GPU's: on an
    H200, BERT-Large's step at 32 x 512 reserved 42.7 GiB with the fused kernel and 71.1 GiB
    with the matrix (docs/benchmarks.md "Scale")."""
    functional = torch.nn.functional
    original = getattr(functional, "scaled_dot_product_attention", None)
    if original is None:
        return

    def scaled_dot_product_attention(query, key, value, attn_mask=None, *args, **kwargs):
        window = _m["open"]
        if not window or not torch.is_grad_enabled():
            return original(query, key, value, attn_mask, *args, **kwargs)
        window.attention += 1
        try:
            out = original(query, key, value, attn_mask, *args, **kwargs)
        finally:
            window.attention -= 1
        core.guard("attention", _attention_saved, torch, window, out, query, key, value, attn_mask)
        return out

    functional.scaled_dot_product_attention = scaled_dot_product_attention


def _attention_saved(torch, window, out, query, key, value, mask):
    """What the fused kernel saves, held as long as the output's node in the graph lives."""
    node = getattr(out, "grad_fn", None)
    if node is None or not hasattr(node, "metadata"):
        return
    lse = query.new_empty(tuple(query.shape[:-1]), dtype=torch.float32)
    saved = [query, key, value, out, lse] + ([mask] if isinstance(mask, torch.Tensor) else [])
    node.metadata["preflight_saved"] = [window.pack(t) for t in saved]


def full_size_figures():
    """In the child, at its end: what its window saw, for the parent (full_size.py)."""
    window = _stop()
    if not window or not (window.flops or window.saved_segments.reserved()):
        return None
    return {"moments": window.highs.moments[-200:], "batch": list(_m["batch"].values()),
            "flops": int(window.flops), "layer_calls": window.layer_calls,
            "backwards": window.backwards, "parts": window.parts.result()}


def parameter_bytes():
    """The bytes of the parameters and buffers of the models and optimizers seen so far."""
    torch = sys.modules["torch"]
    seen = {}
    tensors = [t for module in list(_models) for t in list(module.parameters()) + list(module.buffers())]
    for tensor in tensors + list(_optimized_params()):
        storage = _storage(tensor) if isinstance(tensor, torch.Tensor) else None
        if storage is not None:
            seen[storage[0]] = storage[1]
    return sum(seen.values())


def full_size_bytes(figures, scale=1.0):
    """The GPU memory of the child's step, with what this process keeps now (the optimizer's
    state may not exist yet): whether running it here is affordable. A probe's batch and
    activations are `scale` times smaller than the job's."""
    base = Segments()
    for nbytes in _kept_storages(sys.modules["torch"], {}).values():
        base.add(nbytes)
    for nbytes in figures["batch"]:
        base.add(int(nbytes * scale))
    moments = [[int(part * scale) for part in moment] for moment in figures["moments"]]
    return max(base.reserved(), Highs.peak(moments, base))


def full_size_measured(figures, full, sampled):
    """The child's figures: this process's step is measured at the job's own batch size."""
    figures.update(batch_size=full, sampled_batch=sampled)
    _m["full"] = figures


def _open(torch, at):
    if not hasattr(getattr(torch.autograd, "graph", None), "saved_tensors_hooks"):
        _m["done"] = True  # PyTorch before 1.10: no step is measured
        return
    window = _Window(torch)
    window.rebase(_m["batch"])
    hooks = torch.autograd.graph.saved_tensors_hooks(window.pack, _unpack)
    hooks.__enter__()
    window.hooks = hooks
    window.stance = core.guard("eager step", _eager, torch)
    module_hooks = torch.nn.modules.module
    register = getattr(module_hooks, "register_module_forward_hook", None)
    register_pre = getattr(module_hooks, "register_module_forward_pre_hook", None)
    if register is not None:
        window.forward_hook = register(
            lambda module, inputs, output: core.guard("layer", window.layer_called, module,
                                                      inputs, output))
    _m["open"], _m["opened"], _m["opened_at"] = window, time.monotonic(), at
    if core.state.trace is not None and register is not None:
        core.guard("trace layers", _trace_layers, window)
    if register_pre is not None:
        window.pre_hook = register_pre(
            lambda module, inputs: core.guard("layer", window.layer_starting, module, inputs))
        window.parts.start()


def _eager(torch):
    """Compiled code (torch.compile) runs eagerly while the step is measured, from PyTorch 2.6
    (torch.compiler.set_stance): the hooks then see every layer and saved tensor, nothing is
    compiled again for them, and no compilation falls into the window. The step measured is
    the eager one: its activations are those eager PyTorch keeps, at most what compiled code
    keeps, and its layers' FLOPs are the same."""
    if "torch._dynamo" not in sys.modules:
        return None  # nothing was compiled, and importing the compiler costs a second
    set_stance = getattr(getattr(torch, "compiler", None), "set_stance", None)
    return set_stance("force_eager") if set_stance is not None else None


def _trace_layers(window):
    """Each layer's forward in the window as a span, named by its place in its model."""
    for model in list(_models):
        for name, module in model.named_modules():
            window.names.setdefault(id(module), name or type(module).__name__)
    window.trace = core.state.trace
    window.trace_gpu(_m["opened"])


def trace_gpu(at):
    """backward() returned: the activations it freed leave the modelled GPU memory."""
    window = _m["open"]
    if window and window.trace is not None:
        window.trace_gpu(at)


def _stop():
    window, _m["open"] = _m["open"], False
    if not window:
        return None
    for undo in (lambda: window.hooks.__exit__(None, None, None),
                 window.parts.stop,
                 lambda: window.forward_hook.remove() if window.forward_hook else None,
                 lambda: window.pre_hook.remove() if window.pre_hook else None,
                 lambda: window.stance.__exit__(None, None, None) if window.stance else None):
        try:
            undo()
        except Exception:
            pass
    return window


def _close(torch, frame, at):
    seconds = time.monotonic() - _m["opened"]
    window = _stop()
    _m["done"] = True
    kept = Segments()
    for nbytes in window.kept.values():
        kept.add(nbytes)
    # The peak is at backward's start (window.peak) or at the optimizer's step, when the
    # activations are gone.
    full = _m["full"]
    if full is not None:
        window.rebase(dict(enumerate(full["batch"])))  # the job's own batch, not the sample's
    step = Segments(window.base)
    largest_parameter = max([_bytes(p) for p in _optimized_params()] or [0])
    for _ in range(STEP_TEMPORARIES):
        step.add(largest_parameter)
    peak = window.peak if full is None else Highs.peak(full["moments"], window.base)
    peak = max(peak, step.reserved())
    parameters = sum(1 for _ in _optimized_params())
    flops, calls, parts = window.flops, window.layer_calls, window.parts.result()
    extra = {}
    # The step's own count of micro-batches, when the loop cut ended its accumulation early.
    times = core.guard("accumulation", loop_cut.accumulation, frame) or 1.0
    if full is None and times != 1:
        flops, calls = flops * times, int(round(calls * times))
        parts = _scaled_parts([p for p in parts if p.get("kind") != "optimizer"], times) + \
            [p for p in parts if p.get("kind") == "optimizer"]
    if full is not None:
        # The child ran one forward and backward at full size; this window's step may hold
        # several (gradient accumulation), each the same at full size.
        times = times * max(1, window.backwards) / max(1, full["backwards"])
        flops, calls = full["flops"] * times, int(round(full["layer_calls"] * times))
        parts = _scaled_parts(full["parts"], times) + [p for p in parts if p.get("kind") == "optimizer"]
        extra = {"batch_size": full["batch_size"], "sampled_batch": full["sampled_batch"]}
    if shape_only.active():
        extra["shape_only"] = True  # `seconds` is the fake tensors', no step's
    if window.trace is not None:
        core.guard("trace step", _trace_step, window, at, seconds, peak, flops)
    core.emit("step_measure", seconds=round(seconds, 6), flops=int(flops),
              ops=calls + KERNELS_PER_PARAMETER * parameters,
              live_bytes=kept.reserved(), step_bytes=max(0, peak - kept.reserved()),
              replicas=_replicas(torch), batch_size=extra.get("batch_size", _m["batch_size"]),
              batches_per_epoch=_m["batches"], stage=core.state.stage,
              where=frames.where(frame), **{k: v for k, v in extra.items() if k != "batch_size"})
    core.emit("step_parts", parts=parts, **layers.settings(torch))


def _scaled_parts(parts, times):
    if times == 1:
        return parts
    for part in parts:
        part["calls"] = int(round(part.get("calls", 1) * times))
    return parts


def _trace_step(window, end, seconds, peak, flops):
    window.trace_gpu(end, peak)
    # The span is the iteration's (trace.step_ended), from one step's end to the next's; the
    # seconds measured leave out the window's own setting up. Its FLOPs are step_measure's:
    # the job's own batch's, and all its micro-batches'.
    window.trace.complete("measured step", "step", _m["opened_at"], end,
                          {"flops": int(flops), "seconds": round(seconds, 6)})
    window.starts = []


def _layer_flops(torch, module, inputs, output):
    """Multiply-adds ×2 of one call of a layer, from its weights' and tensors' shapes."""
    nn = torch.nn
    first = inputs[0] if inputs else None
    if isinstance(first, nn.utils.rnn.PackedSequence):
        first = first.data
    if not isinstance(first, torch.Tensor):
        return 0
    if isinstance(module, nn.modules.conv._ConvNd):
        kernel = 1
        for k in module.kernel_size:
            kernel *= k
        if module.transposed:  # each input element meets out_channels/groups kernels
            return 2 * first.numel() * (module.out_channels // module.groups) * kernel
        out = output[0] if isinstance(output, (tuple, list)) else output
        return 2 * out.numel() * (module.in_channels // module.groups) * kernel
    if isinstance(module, nn.Linear):
        return 2 * first.numel() * module.out_features
    if isinstance(module, nn.Bilinear):
        return 2 * (first.numel() // module.in1_features) * module.weight.numel()
    if isinstance(module, nn.RNNBase):
        tokens = first.numel() // module.input_size
        weights = sum(p.numel() for name, p in module.named_parameters() if name.startswith("weight"))
        return 2 * tokens * weights
    if isinstance(module, nn.MultiheadAttention) and len(inputs) >= 3:
        query, key = inputs[0], inputs[1]
        width = module.embed_dim
        q_tokens, k_tokens = query.numel() // width, key.numel() // module.kdim
        per_sequence = key.shape[1 if getattr(module, "batch_first", False) else 0] if key.dim() == 3 \
            else key.shape[0]
        projections = 2 * width * (q_tokens * width + k_tokens * module.kdim + k_tokens * module.vdim
                                   + q_tokens * width)
        return projections + 4 * q_tokens * per_sequence * width  # scores, and their sum of values
    return 0


def _optimized_params():
    for optimizer in list(_optimizers):
        for group in optimizer.param_groups:
            for param in group.get("params", ()):
                yield param


def _kept_storages(torch, alive):
    """Every distinct storage that stays on the GPU between steps: the models' parameters and
    buffers, the optimizers' parameters and state, and a gradient for every parameter an
    optimizer trains (allocated or not yet: by the optimizer's step they all are). `alive`
    gets a weak reference to a tensor of each storage."""
    seen = {}

    def add(tensor):
        if isinstance(tensor, torch.Tensor):
            storage = _storage(tensor)
            if storage is not None:
                seen[storage[0]] = storage[1]
                try:
                    alive[storage[0]] = weakref.ref(tensor)
                except TypeError:
                    pass

    for module in list(_models):
        for tensor in list(module.parameters()) + list(module.buffers()):
            add(tensor)
    for param in _optimized_params():
        add(param)
        if not getattr(param, "requires_grad", False):
            continue
        grad = getattr(param, "grad", None)
        if isinstance(grad, torch.Tensor):
            add(grad)
        else:
            seen[("grad", id(param))] = _bytes(param)
    for optimizer in list(_optimizers):
        for values in optimizer.state.values():
            for value in (values.values() if isinstance(values, dict) else ()):
                add(value)
    return seen


def _bytes(tensor):
    try:
        return tensor.numel() * tensor.element_size()
    except Exception:
        return 0


def _storage(tensor):
    try:
        storage = tensor.untyped_storage() if hasattr(tensor, "untyped_storage") \
            else tensor.storage()
        size = storage.nbytes() if hasattr(storage, "nbytes") \
            else storage.size() * storage.element_size()
        # The storage itself, not its data: a fake tensor's (full_size.py) has none.
        key = getattr(storage, "_cdata", None)
        return (key if key is not None else storage.data_ptr()), size
    except Exception:
        return None


def batch_storages(batch, sizes, storages, depth=0):
    """The storages of the tensors in a batch (nested lists, tuples, dicts); `sizes` collects
    their first dimensions."""
    torch = sys.modules.get("torch")
    if torch is None or depth > 4:
        return
    if isinstance(batch, torch.Tensor):
        if batch.dim() > 0:
            sizes.append(int(batch.shape[0]))
        storage = _storage(batch)
        if storage is not None:
            storages[storage[0]] = storage[1]
        return
    if isinstance(batch, dict):
        batch = list(batch.values())
    if isinstance(batch, (list, tuple)):
        for item in batch[:64]:
            batch_storages(item, sizes, storages, depth + 1)


def _replicas(torch):
    """Devices a DataParallel model splits each batch over (1 without one)."""
    for module in list(_models):
        if isinstance(module, torch.nn.DataParallel):
            ids = getattr(module, "device_ids", None) or []
            return max(1, len(ids))
    return 1
