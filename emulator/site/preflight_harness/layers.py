"""The measured step's work, part by part (docs/harness.md "Layers of the step"), so that
Preflight can benchmark each distinct part alone and build the step's time from them.

Three kinds of part, each with a signature that says everything needed to run it again
without the job's code:
- a layer: a module of torch.nn that computes by itself (a leaf, or attention), with its
  constructor's arguments read back from the module, its parameters' shapes, and its inputs;
- an op: a torch function called outside any such layer (a residual add, F.relu, torch.cat,
  a view, a loss computed by a function), seen through a TorchFunctionMode;
- an optimizer of torch.optim: its hyper-parameters and its parameters' shapes.
A tensor is described by shape, strides, dtype and whether it requires grad (an integer
tensor also by its range, so that indices stay valid); any other argument by its value, when
it is a number, string, slice, dtype or a list of these. A part whose arguments cannot be
described (a custom layer's object, a generator) is kept as an op that is not replayable,
with the time it took here.

Calls with the same signature are one entry with a count. Bounded: at most MAX_ENTRIES
entries; calls beyond that are summed into one entry per kind, not replayable."""

import inspect
import threading
import time

import preflight_harness as core
from . import full_size

MAX_ENTRIES = 2000
MAX_DEPTH = 4           # nesting of argument lists described
MAX_ITEMS = 64          # items of one argument list described
RANGE_NUMEL = 1 << 22   # integer tensors up to this size get their range read
TORCH_NN = "torch.nn.modules."
TORCH_OPTIM = "torch.optim."
# Tensor methods and functions that read metadata or move nothing worth timing.
_SKIPPED = frozenset([
    "__get__", "__set__", "size", "dim", "numel", "item", "tolist", "__len__", "__bool__",
    "__format__", "__repr__", "__hash__", "data_ptr", "element_size", "stride", "is_contiguous",
    "is_floating_point", "is_complex", "nelement", "ndimension", "backward", "register_hook",
    "requires_grad_", "retain_grad", "__reduce_ex__", "__deepcopy__", "storage",
    "untyped_storage", "__array__", "numpy", "get_device", "__index__", "__int__", "__float__",
    "__iter__", "__contains__", "__dir__",
])
ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "complex64": 8,
            "complex128": 16, "int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1,
            "bool": 1}
# Constructor arguments that are not hyper-parameters.
_NOT_ARGUMENTS = frozenset(["self", "device", "dtype", "factory_kwargs", "_weight", "args", "kwargs"])


class Unreplayable(Exception):
    """An argument that cannot be described well enough to run the call again."""


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


class StepParts(object):
    """Records one training step's parts (see the module's docstring) from the thread that
    opened the measured step."""

    def __init__(self, torch):
        self.torch = torch
        self.thread = threading.get_ident()
        self.entries = {}       # key -> entry
        self.overflow = {}      # kind -> entry summing the calls past MAX_ENTRIES
        self.inside = 0         # depth of layers (and of recorded ops) running
        self.quiet = 0          # a torch.optim step is running
        self.starts = []        # (module, perf_counter at its start), innermost last
        self.mode = None
        self.described = {}     # id(module) -> (module, description) of a layer
        self.stepping = {}      # id(optimizer) -> (perf_counter at its step's start, builtin)

    # --- the window ---

    def start(self):
        mode_cls = getattr(getattr(self.torch, "overrides", None), "TorchFunctionMode", None)
        if mode_cls is None:
            return  # PyTorch before 1.13: layers and optimizers only
        parts = self

        class _Mode(mode_cls):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                if parts.inside or parts.quiet or getattr(core.local, "busy", 0) \
                        or threading.get_ident() != parts.thread:
                    return func(*args, **kwargs)
                parts.inside += 1
                try:
                    begin = time.perf_counter()
                    out = func(*args, **kwargs)
                    seconds = time.perf_counter() - begin
                finally:
                    parts.inside -= 1
                core.guard("step parts", parts.op_called, func, args, kwargs, out, seconds)
                return out

        self.mode = _Mode()
        self.mode.__enter__()

    def stop(self):
        mode, self.mode = self.mode, None
        if mode is not None:
            mode.__exit__(None, None, None)

    def result(self):
        out = list(self.entries.values()) + list(self.overflow.values())
        for entry in out:
            entry["seconds_here"] = round(entry["seconds_here"], 7)
        return out

    # --- layers ---

    def layer_starting(self, module):
        if self.quiet or threading.get_ident() != self.thread or not self.is_layer(module):
            return
        # A layer called inside another (or inside a recorded op) is part of its time.
        self.starts.append((module, None if self.inside else time.perf_counter()))
        self.inside += 1

    def layer_ended(self, module, inputs, output, end, flops):
        """The forward hook, at perf_counter() `end`, with the FLOPs measure.py counted."""
        if not any(called is module for called, _ in self.starts):
            return
        while True:  # entries above this layer's are calls that raised
            called, begin = self.starts.pop()
            self.inside -= 1
            if called is module:
                break
        if begin is None:
            return
        try:
            key, entry = self.describe_layer(module, inputs, output)
        except Unreplayable as exc:
            key, entry = self.opaque("layer", type(module).__name__, str(exc))
        entry.setdefault("flops", flops or _numel_of(self.torch, output))
        self.add(key, entry, end - begin)

    def is_layer(self, module):
        cls = type(module)
        if not cls.__module__.startswith(TORCH_NN):
            return False
        return not module._modules or isinstance(module, self.torch.nn.MultiheadAttention)

    def describe_layer(self, module, inputs, output):
        torch = self.torch
        cached = self.described.get(id(module))
        if cached is None or cached[0] is not module:
            cls = type(module)
            params = [[name, [int(n) for n in p.shape], dtype_name(p.dtype), bool(p.requires_grad)]
                      for name, p in module.named_parameters(recurse=True)]
            cached = (module, {"type": cls.__module__.split(".")[0] + ".nn." + cls.__name__,
                               "args": constructor_arguments(torch, module),
                               "params": params})
            self.described[id(module)] = cached
        described = cached[1]
        entry = {"kind": "layer", "type": described["type"], "args": described["args"],
                 "params": described["params"], "training": bool(module.training),
                 "inputs": describe_all(torch, inputs),
                 "grad": bool(torch.is_grad_enabled())}
        entry["bytes"] = tensor_bytes(torch, inputs) + tensor_bytes(torch, output) \
            + sum(_numel(p[1]) * ITEMSIZE.get(p[2], 4) for p in described["params"])
        return key_of(entry), entry

    # --- ops ---

    def op_called(self, func, args, kwargs, out, seconds):
        torch = self.torch
        name = getattr(func, "__name__", None) or ""
        if name in _SKIPPED or name.startswith("_record_function") or not _has_tensor(torch, out):
            return
        try:
            entry = {"kind": "op", "func": func_name(torch, func),
                     "inputs": describe_all(torch, args),
                     "kwargs": {str(k): describe(torch, v) for k, v in kwargs.items()},
                     "grad": bool(torch.is_grad_enabled())}
            key = key_of(entry)
        except Unreplayable as exc:
            key, entry = self.opaque("op", name, str(exc))
        entry.setdefault("bytes", tensor_bytes(torch, args) + tensor_bytes(torch, out))
        entry.setdefault("flops", op_flops(torch, name, args, kwargs, out))
        self.add(key, entry, seconds)

    # --- optimizers ---

    def optimizer_started(self, optimizer):
        builtin = type(optimizer).__module__.startswith(TORCH_OPTIM)
        if builtin:
            self.quiet += 1  # benchmarked whole; another optimizer's ops are recorded
        self.stepping[id(optimizer)] = (time.perf_counter(), builtin)

    def optimizer_ended(self, optimizer):
        started = self.stepping.pop(id(optimizer), None)
        if started is None:
            return  # its step began before the window opened
        seconds = time.perf_counter() - started[0]
        if not started[1]:
            return
        self.quiet -= 1
        torch = self.torch
        groups = []
        for group in optimizer.param_groups:
            params = [[[int(n) for n in p.shape], dtype_name(p.dtype)]
                      for p in group.get("params", ()) if getattr(p, "grad", None) is not None]
            settings = {}
            for key, value in group.items():
                if key == "params":
                    continue
                try:
                    settings[str(key)] = describe(torch, value)
                except Unreplayable:
                    pass  # a setting we cannot give back keeps its default
            groups.append({"params": params, "settings": settings})
        cls = type(optimizer)
        elements = sum(_numel(p[0]) for g in groups for p in g["params"])
        entry = {"kind": "optimizer", "type": "torch.optim." + cls.__name__, "groups": groups,
                 "bytes": sum(3 * _numel(p[0]) * ITEMSIZE.get(p[1], 4)
                              for g in groups for p in g["params"]),
                 "flops": 4 * elements}
        self.add(key_of(entry), entry, seconds)

    # --- bookkeeping ---

    def opaque(self, kind, name, why):
        entry = {"kind": kind, "func": name, "replayable": False, "why": why[:200]}
        return key_of(entry), entry

    def add(self, key, entry, seconds):
        found = self.entries.get(key)
        if found is None:
            if len(self.entries) >= MAX_ENTRIES:
                found = self.overflow.get(entry["kind"])
                if found is None:
                    found = self.overflow[entry["kind"]] = {
                        "kind": entry["kind"], "func": "(more)", "replayable": False,
                        "why": "more than %d distinct parts" % MAX_ENTRIES,
                        "calls": 0, "seconds_here": 0.0, "bytes": 0}
                found["bytes"] += entry.get("bytes", 0)
            else:
                found = self.entries[key] = entry
                entry["calls"], entry["seconds_here"] = 0, 0.0
        found["calls"] += 1
        found["seconds_here"] += seconds


_amp = {"dtype": None}  # the dtype of the CUDA autocast the job entered


def note_autocast(torch, device_type, args, kwargs):
    """An autocast region built (torch.autocast(device_type, dtype, enabled, ...)): without a
    GPU a CUDA one does nothing here, but on the platform its products run in half precision."""
    if device_type != "cuda":
        return
    dtype = kwargs.get("dtype", args[0] if args else None)
    enabled = kwargs.get("enabled", args[1] if len(args) > 1 else True)
    if enabled:
        _amp["dtype"] = dtype_name(dtype) if isinstance(dtype, torch.dtype) else "float16"


def settings(torch):
    """What decides the precision of float32 work on a GPU: CUDA autocast, and TensorFloat-32
    in matrix products and in cuDNN's convolutions (PyTorch's defaults changed in 1.12)."""
    backends = getattr(torch, "backends", None)
    matmul = getattr(getattr(getattr(backends, "cuda", None), "matmul", None), "allow_tf32", None)
    cudnn = getattr(getattr(backends, "cudnn", None), "allow_tf32", None)
    return {"torch": str(getattr(torch, "__version__", "")), "autocast": _amp["dtype"],
            "threads": int(torch.get_num_threads()),
            "tf32": {"matmul": bool(matmul), "cudnn": bool(cudnn)}}


def _without_ranges(value):
    """An integer tensor's description less its range: calls that differ only in their index
    values take the same time, so they are one part (the first call's range rebuilds it)."""
    if isinstance(value, dict):
        return {k: _without_ranges(v) for k, v in value.items() if k != "range"}
    if isinstance(value, (list, tuple)):
        return [_without_ranges(v) for v in value]
    return value


def key_of(entry):
    return repr(sorted((k, _without_ranges(v)) for k, v in entry.items() if k != "bytes"))


def func_name(torch, func):
    """Where the function is found again: Tensor.X, torch.linalg.X, torch.nn.functional.X or
    torch.X. The benchmark looks each up by name in that namespace only."""
    name = getattr(func, "__name__", None)
    if not name:
        raise Unreplayable("a function without a name")
    owner = getattr(func, "__objclass__", None)
    qualname = getattr(func, "__qualname__", "") or ""
    if (isinstance(owner, type) and issubclass(torch.Tensor, owner)) \
            or qualname.startswith(("_TensorBase.", "TensorBase.", "Tensor.")):  # 2.2 renamed it
        if getattr(torch.Tensor, name, None) is not None:
            return "Tensor." + name
    module = getattr(func, "__module__", None) or ""
    linalg = getattr(torch, "linalg", None)
    if name.startswith("linalg_") and getattr(linalg, name[len("linalg_"):], None) is not None:
        # torch.linalg's C functions are named linalg_X (vector_norm: clip_grad_norm_ in 2.x)
        return "torch.linalg." + name[len("linalg_"):]
    if module.startswith("torch.nn.functional") and hasattr(torch.nn.functional, name):
        return "torch.nn.functional." + name
    if hasattr(torch, name) and (not module or module.startswith("torch")):
        return "torch." + name  # also the C functions torch re-exports under other names
    if getattr(torch.nn.functional, name, None) is func:
        return "torch.nn.functional." + name
    raise Unreplayable("%s is not a torch function" % name)


# Functions whose FLOPs are those of a matrix product: 2 x output elements x inner dimension.
_PRODUCTS = frozenset(["matmul", "mm", "bmm", "__matmul__", "__rmatmul__", "addmm", "baddbmm",
                       "addbmm", "addmv", "mv", "linear", "bilinear"])


def op_flops(torch, name, args, kwargs, out):
    """FLOPs of one call: matrix products and convolutions from their shapes, attention from
    its scores; anything else one per output element."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    produced = _numel_of(torch, out)
    if name in _PRODUCTS and tensors:
        if name == "linear" and len(tensors) >= 2:
            return 2 * tensors[0].numel() * tensors[1].shape[0]
        inner = tensors[-1].shape[-2] if name in ("addmm", "baddbmm", "addbmm", "addmv") and \
            tensors[-1].dim() >= 2 else tensors[0].shape[-1] if tensors[0].dim() else 1
        return 2 * produced * int(inner)
    if name.startswith("conv") and len(tensors) >= 2:
        per_element = _numel(tensors[1].shape[1:])  # each output (or, transposed, input) element
        if name.startswith("conv_transpose"):
            return 2 * tensors[0].numel() * per_element
        return 2 * produced * per_element
    if name == "scaled_dot_product_attention" and len(tensors) >= 3:
        query, key = tensors[0], tensors[1]
        return 4 * query.numel() * key.shape[-2]
    return produced


def constructor_arguments(torch, module):
    """The arguments that would build this module again, read back from its attributes."""
    parameters = None
    for cls in type(module).__mro__:  # past constructors that only pass *args, **kwargs on
        try:
            parameters = inspect.signature(cls.__init__).parameters
        except (TypeError, ValueError):
            raise Unreplayable("no constructor signature") from None
        if not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters.values()):
            break
    args = {}
    for name, parameter in parameters.items():
        if name in _NOT_ARGUMENTS or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        default = parameter.default
        if name == "bias" and isinstance(default, bool):
            value = _has_bias(module)
        elif name == "add_bias_kv":
            value = getattr(module, "bias_k", None) is not None
        elif hasattr(module, name):
            value = getattr(module, name)
            if isinstance(value, torch.Tensor):
                value = True if isinstance(default, bool) else None
            elif value is None and isinstance(default, bool):
                value = False
        elif default is parameter.empty:
            raise Unreplayable("argument %s cannot be read back" % name)
        else:
            continue
        args[name] = describe(torch, value)
    return args


def _has_bias(module):
    for attribute in ("bias", "in_proj_bias", "bias_ih_l0"):
        if hasattr(module, attribute):
            return getattr(module, attribute) is not None
    return True


def describe_all(torch, values):
    if len(values) > MAX_ITEMS:
        raise Unreplayable("%d arguments" % len(values))
    return [describe(torch, value) for value in values]


def describe(torch, value, depth=0):
    """A JSON value that says how to make this argument again (see the module's docstring)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        if value != value or value in (float("inf"), float("-inf")):
            return ["F", repr(value)]
        return value
    if isinstance(value, torch.Tensor):
        return describe_tensor(torch, value)
    if depth >= MAX_DEPTH:
        raise Unreplayable("arguments nested too deep")
    if isinstance(value, torch.Size):
        return ["L", [int(n) for n in value]]
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_ITEMS:
            raise Unreplayable("a list of %d arguments" % len(value))
        return ["L", [describe(torch, item, depth + 1) for item in value]]
    if isinstance(value, slice):
        return ["S", [describe(torch, part, depth + 1) for part in (value.start, value.stop, value.step)]]
    if value is Ellipsis:
        return ["E"]
    if isinstance(value, torch.dtype):
        return ["D", dtype_name(value)]
    if isinstance(value, torch.device):
        return ["V", "cpu"]
    if isinstance(value, torch.memory_format):
        return ["M", str(value).replace("torch.", "")]
    raise Unreplayable("an argument of type %s" % type(value).__name__)


def describe_tensor(torch, tensor):
    if tensor.is_sparse or tensor.is_quantized or getattr(tensor, "is_nested", False):
        raise Unreplayable("a sparse, quantized or nested tensor")
    shape = [int(n) for n in tensor.shape]
    out = ["T", shape, dtype_name(tensor.dtype), bool(tensor.requires_grad)]
    strides = [int(n) for n in tensor.stride()]
    if not tensor.is_contiguous():
        out.append({"strides": strides})
    if not (tensor.is_floating_point() or tensor.is_complex()):
        low, high = 0, 1
        if 0 < tensor.numel() <= RANGE_NUMEL and tensor.dtype != torch.bool \
                and not full_size.in_child():  # a fake tensor has no values to read
            low, high = int(tensor.min()), int(tensor.max())
        out.append({"range": [low, high]})
    return out


def tensor_bytes(torch, value, depth=0):
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if depth < MAX_DEPTH and isinstance(value, (list, tuple)):
        return sum(tensor_bytes(torch, item, depth + 1) for item in value[:MAX_ITEMS])
    return 0


def _numel_of(torch, value):
    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, (list, tuple)):
        return sum(item.numel() for item in value[:MAX_ITEMS] if isinstance(item, torch.Tensor))
    return 0


def _has_tensor(torch, value):
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(isinstance(item, torch.Tensor) for item in value[:MAX_ITEMS])
    return False


def _numel(shape):
    count = 1
    for n in shape:
        count *= n
    return count

