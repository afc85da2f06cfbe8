"""Shape-only tensors (PyTorch 2.1+'s FakeTensorMode: shapes, dtypes and devices, no data), and
models larger than the host (docs/harness.md "Models larger than the host").

Two parts of the harness run the job's own code on them: full_size.py's child, for one
iteration at the job's own batch size, and this module, for the whole dry run of a model whose
parameters would not fit the host. Every parameter a module registers is counted; once the
parameters alive exceed PREFLIGHT_HOST_PARAMETERS bytes (768 MiB by default: with their
gradients and Adam's two moments, 3 GiB), the process turns every parameter it has registered,
and every one registered from then on, into a fake tensor of the same shape. The job goes on
unchanged: its forward, backward and optimizer run shape-only, in seconds and little memory
whatever the model, the step is measured at full size, and the data it reads, the files it
writes and the paths it takes are still its own. What cannot be computed without values is
made up and said so: a value read (`.item()`, `bool()`, each of `.tolist()`) is 0 or False, a
tensor's `.numpy()` zeros, a checkpoint written holds no data."""

import os
import sys
import weakref

import preflight_harness as core
from . import frames, virtual_gpu

# Bytes of parameters this process holds before its model turns shape-only.
HOST_PARAMETERS = 768 << 20
MAX_NOTES = 20          # made-up values reported


class Conversions(object):
    """The real tensors the job's code has handed to a fake mode (parameters, buffers, a batch,
    tensors of its own), each with the fake it was converted to, for as long as the real one
    lives (a one-element one is kept, for its value, however long that is): measure.py judges
    a fake storage saved for backward by the real storage it stands for (a parameter's is kept
    between steps, the batch's is the batch, anything else is the step's own), and a value read
    from a one-element fake is the real one's.

    Each fake is held while its real tensor lives. The converter itself keeps a fake only while
    something uses it: a weight converted for one operation would die at its end, be converted
    again at the next (a tenth of the full-size check's time), and leave its storage's address
    to an activation, which would then be taken for the weight (a GPT-2 step read 12% low).
    Held, each real tensor is converted once, and no address is taken while an entry has it."""
    __slots__ = ("entries",)

    def __init__(self):
        # fake storage key -> (the fake, the real storage's key, the real tensor when it has
        # one element)
        self.entries = {}

    def add(self, fake, tensor):
        fake_key = fake.untyped_storage()._cdata
        if fake_key in self.entries:
            return
        real_key = tensor.untyped_storage()._cdata
        if tensor.numel() == 1:  # kept: a parameter's real one is freed as the model turns fake
            self.entries[fake_key] = (fake, real_key, tensor)
        else:
            self.entries[fake_key] = (fake, real_key, None)
            weakref.finalize(tensor, self.entries.pop, fake_key, None)

    def source(self, key):
        """The key of the real storage a fake storage stands for, or None."""
        entry = self.entries.get(key)
        return entry[1] if entry is not None else None

    def real(self, key):
        """The real one-element tensor a fake storage was converted from, or None."""
        entry = self.entries.get(key)
        return entry[2] if entry is not None else None


_s = {
    "mode": None,        # the FakeTensorMode of this process, once one exists
    "conversions": Conversions(),
    "notes": None,       # made-up values: a list in full_size.py's child, else events
    "tracked": {},       # id(parameter) -> (weak reference, bytes), before the switch
    "modules": [],       # (weak reference to a module, parameter name), before the switch
    "total": 0,
    "limit": None,
    "active": False,     # this process's model is shape-only
    "emitted": [],       # (what, where) of the made-up values emitted as events
}


def active():
    return _s["active"]


def is_fake(tensor):
    fake = sys.modules.get("torch._subclasses.fake_tensor")
    return fake is not None and isinstance(tensor, fake.FakeTensor)


def enter(torch, notes=None):
    """This process's fake mode. Operations on its fake tensors are shape-only, whatever else
    they take; in full_size.py's child (`notes` given: it collects the made-up values, which are
    otherwise events) the mode is pushed, so that every tensor created is fake too."""
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    _note_conversions(mode, _s["conversions"])
    _values_made_up(torch, mode, _s["conversions"])
    FakeTensor.__deepcopy__ = _deepcopy
    _s["mode"], _s["notes"] = mode, notes
    if notes is not None:
        mode.__enter__()
    return mode


def _deepcopy(self, memo):
    """A fake tensor's deep copy (`copy.deepcopy(layer)` in nn.TransformerEncoder, a model's
    EMA copy): a fake of the same mode, shape, strides and dtype. PyTorch's own copies it
    through the tensor's data, which a fake has not, into a fake of another mode."""
    if id(self) in memo:
        return memo[id(self)]
    torch = sys.modules["torch"]
    with self.fake_mode:
        out = torch.empty_strided(self.shape, self.stride(), dtype=self.dtype, device=self.device)
    if isinstance(self, torch.nn.Parameter):
        out = torch.nn.Parameter(out, requires_grad=self.requires_grad)
    elif self.requires_grad:
        out.requires_grad_(True)
    memo[id(self)] = out
    return out


def conversions():
    """The real tensors converted to fake ones in this process (Conversions)."""
    return _s["conversions"]


def install(torch):
    """Count the parameters every module registers (PyTorch 2.0's global registration hook)."""
    limit = _limit()
    hooks = torch.nn.modules.module
    register = getattr(hooks, "register_module_parameter_registration_hook", None)
    if not limit or register is None:
        return
    _s["limit"] = limit
    register(lambda module, name, param: core.guard("parameters", _registered, torch, module, name, param))
    # A module registered whole (nn.TransformerEncoder's deep copies of its layer) brings
    # parameters that were never registered one by one.
    register_module = getattr(hooks, "register_module_module_registration_hook", None)
    if register_module is not None:
        register_module(lambda module, name, child: core.guard("parameters", _module_registered, torch,
                                                               child))
    _patch_values(torch)


def _limit():
    try:
        return int(os.environ.get("PREFLIGHT_HOST_PARAMETERS", HOST_PARAMETERS))
    except ValueError:
        return HOST_PARAMETERS


def _registered(torch, module, name, param):
    """A parameter registered (`self.weight = nn.Parameter(...)`): the fake that replaces it
    once the model is shape-only, else None (kept)."""
    if not _real(param):
        return None
    if _s["active"]:
        return _s["mode"].from_tensor(param)
    if not _counting(torch):
        return None
    _track(module, name, param)
    return _over_limit(torch, param)


def _module_registered(torch, child):
    """A module registered in another: its parameters are counted, or made fake."""
    if child is None or not (_s["active"] or _counting(torch)):
        return None
    for module in child.modules():
        for name, param in list(module._parameters.items()):
            if not _real(param):
                continue
            if _s["active"]:
                module._parameters[name] = _s["mode"].from_tensor(param)
            else:
                _track(module, name, param)
    if not _s["active"]:
        _over_limit(torch, None)  # past the limit, every parameter tracked turns fake
    return None


def _real(param):
    return param is not None and not is_fake(param) and param.device.type != "meta"


def _counting(torch):
    return core.state is not None and core.state.phase != "setup" and not _in_child_or_worker(torch)


def _track(module, name, param):
    key = id(param)
    seen = _s["tracked"].get(key)
    if seen is None or seen[0]() is not param:
        nbytes = param.numel() * param.element_size()
        _s["tracked"][key] = (weakref.ref(param), nbytes)
        _s["total"] += nbytes
    _s["modules"].append((weakref.ref(module), name))


def _over_limit(torch, param):
    """Past the limit, the switch: then the fake for `param`, the parameter being registered;
    else None."""
    if _s["total"] <= _s["limit"]:
        return None
    # Parameters freed since (a model built and dropped) no longer count.
    _s["tracked"] = {k: v for k, v in _s["tracked"].items() if v[0]() is not None}
    _s["total"] = sum(nbytes for _, nbytes in _s["tracked"].values())
    from . import full_size
    if _s["total"] <= _s["limit"] or full_size.shape_only_support(torch):
        return None  # this torch has no fake tensors: the model stays real
    return _switch(torch, param)


def _in_child_or_worker(torch):
    from . import full_size
    data = sys.modules.get("torch.utils.data")
    return full_size.in_child() or (data is not None and data.get_worker_info() is not None)


def _switch(torch, param):
    """The parameters alive pass the host's share: every one becomes fake, ties kept; the
    fake for `param`, the one being registered (None for none)."""
    count = sum(ref().numel() for ref, _ in _s["tracked"].values() if ref() is not None)
    nbytes = _s["total"]
    enter(torch)
    _s["active"] = True
    if virtual_gpu.count() > 0:
        from . import measure
        measure.efficient_attention(torch)  # the platform's GPU runs the fused kernels
    mode, fakes = _s["mode"], {}
    for module_ref, name in _s["modules"]:
        module = module_ref()
        real = module._parameters.get(name) if module is not None else None
        if real is None or is_fake(real):
            continue
        if id(real) not in fakes:
            fakes[id(real)] = (real, mode.from_tensor(real))
        module._parameters[name] = fakes[id(real)][1]
    fake = None
    if param is not None:
        if id(param) not in fakes:
            fakes[id(param)] = (param, mode.from_tensor(param))
        fake = fakes[id(param)][1]
    _s["tracked"], _s["modules"] = {}, []
    core.emit("shape_only", parameters=count, bytes=nbytes, limit=_s["limit"],
              where=frames.where(_building(torch, sys._getframe(1))))
    return fake


def _building(torch, frame):
    """The frame that builds the model: outside every module's __init__ (and the
    comprehensions in them), `model = GPT(config)` rather than a layer's own line."""
    module = torch.nn.Module
    f = frame
    while f is not None:
        name = f.f_code.co_name
        inside = name.startswith("<") and name.endswith("comp>") or name == "<genexpr>" or \
            name == "__init__" and isinstance(frames.self_of(f), module)
        if not inside and frames.is_user(f.f_code.co_filename):
            return f
        f = f.f_back
    return frame


def note_optimizer(optimizer):
    """An optimizer of a shape-only model steps with its multi-tensor kernels, as PyTorch
    chooses by default for CUDA parameters: on the platform's GPU it would (a fake parameter
    says it is on the CPU, where the default is a loop over the parameters), and one
    operation for all parameters is one shape-only dispatch, not one per parameter."""
    if not _s["active"] or virtual_gpu.count() == 0:
        return
    for group in optimizer.param_groups:
        if "foreach" in group and group["foreach"] is None and not group.get("fused"):
            group["foreach"] = True


def saved(torch, obj):
    """What torch.save writes of `obj` once the model is shape-only: each fake tensor as a meta
    tensor of its shape (no data), so the file is written where the job writes it."""
    if not _s["active"]:
        return obj
    return mapped(obj, lambda value: torch.empty(value.shape, dtype=value.dtype, device="meta")
                  if is_fake(value) else None, levels=16)


def loaded(torch, obj):
    """What torch.load gives once the model is shape-only: each meta tensor a fake one."""
    if not _s["active"]:
        return obj
    mode = _s["mode"]

    def fake(value):
        if not isinstance(value, torch.Tensor) or value.device.type != "meta":
            return None
        with mode:
            return torch.empty(value.shape, dtype=value.dtype)

    return mapped(obj, fake, levels=16)


def mapped(obj, leaf, levels=4, depth=0):
    """`obj` with `leaf` applied to its parts, through its lists, tuples (named ones too) and
    mappings, which keep their type, past `levels` levels no further; `leaf` gives None for a part to go
    into or keep."""
    done = leaf(obj)
    if done is not None or depth > levels:
        return obj if done is None else done
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*[mapped(x, leaf, levels, depth + 1) for x in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)(mapped(x, leaf, levels, depth + 1) for x in obj)
    if isinstance(obj, dict):
        try:
            out = type(obj)()
        except Exception:
            out = {}
        for key, value in obj.items():
            out[key] = mapped(value, leaf, levels, depth + 1)
        return out
    return obj


def _patch_values(torch):
    """`.numpy()` of a fake tensor: zeros of its shape, noted. (Its `.tolist()` reads each
    element, as a value read.)"""
    original = torch.Tensor.numpy

    def numpy(self, *args, **kwargs):
        if not is_fake(self):
            return original(self, *args, **kwargs)
        note("a tensor's values (numpy)", sys._getframe(1))
        from torch.utils._python_dispatch import _disable_current_modes
        with _disable_current_modes():
            return original(torch.zeros(self.shape, dtype=self.dtype))

    torch.Tensor.numpy = numpy


def _note_conversions(mode, noted):
    """Each real tensor the job's code hands to the fake mode is noted in `noted`."""
    converter = mode.fake_tensor_converter
    original = converter.from_real_tensor

    def from_real_tensor(fake_mode, tensor, *args, **kwargs):
        fake = original(fake_mode, tensor, *args, **kwargs)
        core.guard("conversion", noted.add, fake, tensor)
        return fake

    converter.from_real_tensor = from_real_tensor


def _values_made_up(torch, mode, noted):
    """What fake tensors cannot answer, answered in the mode's dispatch: a value read
    (`.item()`, `bool()`, `float()`) is the real tensor's when the fake was converted from a
    one-element tensor of the job's, else 0 or False; `nonzero`, `masked_select` and `unique`,
    whose size depends on values, give their largest result. Each made-up value in the job's
    code is noted."""
    from torch.utils._python_dispatch import _disable_current_modes
    aten = torch.ops.aten
    unique = aten._unique2.default
    scalar = aten._local_scalar_dense.default
    nonzero = aten.nonzero.default
    masked_select = aten.masked_select.default
    empty = aten.empty.memory_format
    dispatch = mode.dispatch

    def made_up(func, types, args=(), kwargs=None):
        if func is scalar:
            value = args[0]
            real = noted.real(value.untyped_storage()._cdata)
            if real is not None:
                with _disable_current_modes():
                    return real.item()
            note("a value read (%s)" % ("bool" if value.dtype == torch.bool else "item"))
            return False if value.dtype == torch.bool else 0.0 if value.is_floating_point() else 0
        if func is nonzero:
            note("torch.nonzero")
            x = args[0]
            return dispatch(empty, types, ((x.numel(), x.dim()),), {"dtype": torch.long, "device": x.device})
        if func is masked_select:
            note("a boolean mask")
            x, mask = args[0], args[1]
            size = max(x.numel(), mask.numel())
            return dispatch(empty, types, ((size,),), {"dtype": x.dtype, "device": x.device})
        if func is unique:
            note("torch.unique")
            x, flags = args[0], dict(zip(("sorted", "return_inverse", "return_counts"), args[1:]))
            flags.update(kwargs or {})
            inverse, counts = bool(flags.get("return_inverse")), bool(flags.get("return_counts"))
            as_long = {"dtype": torch.long, "device": x.device}
            return (dispatch(empty, types, ((x.numel(),),), {"dtype": x.dtype, "device": x.device}),
                    dispatch(empty, types, (tuple(x.shape) if inverse else (0,),), as_long),
                    dispatch(empty, types, ((x.numel(),) if counts else (0,),), as_long))
        return dispatch(func, types, args, kwargs or {})

    mode.dispatch = made_up


def note(what, frame=None):
    """A value made up for the job's code at `frame`, or the innermost of the job's frames."""
    if getattr(core.local, "busy", 0):
        return  # the harness's own reading (a layer's description)
    where = frames.where(frame if frame is not None else sys._getframe(1))
    notes = _s["notes"]
    if notes is None:
        seen = _s["emitted"]
        if len(seen) < MAX_NOTES and (what, where) not in seen:
            seen.append((what, where))
            core.emit("made_up", what=what, where=where)
    elif len(notes) < MAX_NOTES and not any(n["what"] == what and n["where"] == where for n in notes):
        notes.append({"what": what, "where": where})
