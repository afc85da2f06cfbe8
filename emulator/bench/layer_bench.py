"""Benchmarks parts of a training step one at a time (docs/estimate.md "Benchmarking the
parts"): each layer, op or optimizer that the harness described (emulator/site/
preflight_harness/layers.py) is built again from its signature alone, with random inputs of
the recorded shapes, and timed forward and backward. No code of the job runs: functions are
looked up in torch's own namespaces and layers among torch.nn's classes only, whatever the
signature says. Preflight runs this file with the image's Python, as nobody, without network:

    python3 -c "$(cat layer_bench.py)" < {"budget": SECONDS, "deadline": SECONDS,
                                          "parts": [{"id": ..., ...}]}

Each result is one JSON line on standard output, flushed as soon as it is known, in the order
of the parts: {"id", "forward", "backward", "repeats"} in seconds (medians), or {"id",
"error"}. Each part is timed for about `budget` seconds after its warm-up (see timed()), at
least 3 and at most 100 times, with as many threads as the job's step had (`threads`). No
part is started once `deadline` seconds have passed: Preflight asks again for the rest."""

import json
import re
import resource
import sys
import time

_INPLACE_DUNDERS = frozenset(["__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                              "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__",
                              "__ilshift__", "__irshift__", "__imatmul__", "__setitem__"])
MIN_REPEATS, MAX_REPEATS, WARM_UPS = 3, 100, 8
# glibc's mallopt parameters (malloc.h).
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3


class BadPart(Exception):
    pass


def main():
    request = json.load(sys.stdin)
    budget = min(max(float(request.get("budget", 0.2)), 0.0), 10.0)
    deadline = time.monotonic() + float(request.get("deadline", 180))
    keep_freed_memory()
    import torch
    threads = request.get("threads")
    if isinstance(threads, int) and 0 < threads <= 1024:
        torch.set_num_threads(threads)  # as many as the job's step ran with
    for part in request.get("parts") or []:
        if time.monotonic() > deadline:
            break
        result = {"id": part.get("id")}
        try:
            result.update(bench(torch, part, budget))
        except Exception as exc:  # a part that cannot be rebuilt here: its error, and on
            result["error"] = "%s: %s" % (type(exc).__name__, str(exc)[:300])
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()
    return 0


def keep_freed_memory():
    """A training step allocates its activations, and frees them in backward, in one process
    whose heap stays grown; a part timed alone frees everything after each call, and glibc
    would hand that memory back to the kernel and fault it in again on the next call (about
    10 us a page on a virtual machine). Keeping freed memory makes each call cost its work."""
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)  # glibc's largest: 32 MiB on 64 bits
        libc.mallopt(M_TRIM_THRESHOLD, (1 << 31) - 1)
        libc.mallopt(M_TOP_PAD, 256 << 20)
    except (OSError, AttributeError, ImportError):
        pass  # not glibc: the allocator as it is


def bench(torch, part, budget):
    kind = part.get("kind")
    if kind == "optimizer":
        return bench_optimizer(torch, part, budget)
    if kind == "layer":
        module, inputs, inplace = layer_call(torch, part)
        call, params = (lambda args: module(*args)), list(module.parameters())
    elif kind == "op":
        call, inputs, inplace = op_call(torch, part)
        params = ()
    else:
        raise BadPart("a part of kind %r" % kind)
    return time_call(torch, call, inputs, inplace, bool(part.get("grad")), budget, params)


def layer_call(torch, part):
    name = str(part.get("type", ""))
    if not name.startswith("torch.nn."):
        raise BadPart("%s is not a layer of torch.nn" % name)
    cls = getattr(torch.nn, name[len("torch.nn."):], None)
    if not isinstance(cls, type) or not issubclass(cls, torch.nn.Module):
        raise BadPart("torch.nn has no layer %s" % name)
    args = {str(k): build(torch, v) for k, v in (part.get("args") or {}).items()}
    module = construct(cls, args)
    expected = {p[0]: (tuple(p[1]), p[2], p[3]) for p in part.get("params") or []}
    built = dict(module.named_parameters())
    if set(built) != set(expected):
        raise BadPart("built with parameters %s, the job's has %s" % (sorted(built), sorted(expected)))
    for key, param in built.items():
        shape, dtype, requires_grad = expected[key]
        if tuple(param.shape) != shape:
            raise BadPart("parameter %s is %s here, %s in the job" % (key, list(param.shape), list(shape)))
        param.data = param.data.to(getattr(torch, dtype))
        param.requires_grad_(requires_grad)
    module.train(bool(part.get("training")))
    inputs = [build(torch, spec) for spec in part.get("inputs") or []]
    return module, inputs, bool(args.get("inplace"))


def construct(cls, args):
    """cls(**args); an argument that a subclass's constructor passes on itself (LSTM gives
    RNNBase its mode) is left out when the constructor says it got it twice."""
    for _ in range(4):
        try:
            return cls(**args)
        except TypeError as exc:
            match = re.search(r"got multiple values for argument '(\w+)'", str(exc))
            if not match or match.group(1) not in args:
                raise
            args = dict(args)
            del args[match.group(1)]
    return cls(**args)


def op_call(torch, part):
    name = str(part.get("func", ""))
    func = None
    if name.startswith("Tensor."):
        func = getattr(torch.Tensor, name[len("Tensor."):], None)
    elif name.startswith("torch.nn.functional."):
        func = getattr(torch.nn.functional, name[len("torch.nn.functional."):], None)
    elif name.startswith("torch.linalg."):
        func = getattr(getattr(torch, "linalg", None), name[len("torch.linalg."):], None)
    elif name.startswith("torch.") and "." not in name[len("torch."):]:
        func = getattr(torch, name[len("torch."):], None)
    if not callable(func):
        raise BadPart("%s is not a torch function" % name)
    inputs = [build(torch, spec) for spec in part.get("inputs") or []]
    kwargs = {str(k): build(torch, v) for k, v in (part.get("kwargs") or {}).items()}
    short = name.rsplit(".", 1)[-1]
    inplace = short in _INPLACE_DUNDERS or (short.endswith("_") and not short.endswith("__")) \
        or kwargs.get("inplace") is True or "out" in kwargs
    return (lambda args: func(*args, **kwargs)), inputs, inplace


def time_call(torch, call, inputs, inplace, grad, budget, params=()):
    """Median forward and backward times of call(inputs). Backward computes the gradients of
    the inputs and parameters that require them without adding them into .grad: in the step,
    an input's gradient goes on to the layer before it."""
    wrt = [x for x in list(inputs) + list(params) if isinstance(x, torch.Tensor) and x.requires_grad]

    def fresh():
        # An in-place call writes its first tensor: each call gets a copy (made untimed).
        if not inplace:
            return inputs
        out, copied = [], False
        for x in inputs:
            if not copied and isinstance(x, torch.Tensor):
                x, copied = x.clone(), True
            out.append(x)
        return out

    def once():
        args = fresh()
        before = minor_faults()
        with torch.set_grad_enabled(grad):
            begin = time.perf_counter()
            out = call(args)
            middle = time.perf_counter()
        faults = minor_faults() - before
        outs = [t for t in (out if isinstance(out, (tuple, list)) else [out])
                if isinstance(t, torch.Tensor) and t.requires_grad]
        back = 0.0
        if grad and outs and wrt:
            grads = [torch.randn_like(t) for t in outs]  # their pages are not the call's
            before = minor_faults()
            begin_back = time.perf_counter()
            torch.autograd.grad(outs, wrt, grads, allow_unused=True)
            back = time.perf_counter() - begin_back
            faults += minor_faults() - before
        return middle - begin, back, faults

    return timed(once, budget)


def minor_faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def timed(once, budget):
    """Medians of once()'s (forward, backward) after warm-up. In a training loop the heap has
    grown to the step's size and every call reuses pages already touched; alone, the first calls
    grow it, and a call that touches new pages pays about 10 us a page on a virtual machine.
    So the warm-up goes on until a call touches no new page (at most WARM_UPS calls), and only
    the repeats that touched none count, when there are such."""
    for _ in range(WARM_UPS):
        if once()[2] == 0:
            break
    runs, spent = [], 0.0
    while len(runs) < MIN_REPEATS or (spent < budget and len(runs) < MAX_REPEATS):
        forward, backward, faults = once()
        runs.append((forward, backward, faults))
        spent += forward + backward
    clean = [run for run in runs if run[2] == 0] or runs
    return {"forward": median([run[0] for run in clean]), "backward": median([run[1] for run in clean]),
            "repeats": len(clean)}


def bench_optimizer(torch, part, budget):
    name = str(part.get("type", ""))
    cls = getattr(torch.optim, name[len("torch.optim."):], None) if name.startswith("torch.optim.") else None
    if not isinstance(cls, type) or not issubclass(cls, torch.optim.Optimizer):
        raise BadPart("torch.optim has no optimizer %s" % name)
    groups = []
    for group in part.get("groups") or []:
        params = []
        for shape, dtype in group.get("params") or []:
            param = torch.randn(tuple(shape), dtype=dtype_of(torch, dtype)).requires_grad_()
            param.grad = torch.randn_like(param)
            params.append(param)
        settings = {str(k): build(torch, v) for k, v in (group.get("settings") or {}).items()}
        settings.update(params=params)
        groups.append(settings)
    optimizer = cls(groups)
    optimizer.step()  # creates the optimizer's state

    def once():
        faults = minor_faults()
        begin = time.perf_counter()
        optimizer.step()
        return time.perf_counter() - begin, 0.0, minor_faults() - faults

    return timed(once, budget)


def build(torch, spec):
    """The value a description of layers.describe stands for: a random tensor of its shape."""
    if not isinstance(spec, list):
        return spec
    tag = spec[0] if spec else None
    if tag == "T":
        return build_tensor(torch, spec)
    if tag == "L":
        return [build(torch, item) for item in spec[1]]
    if tag == "S":
        return slice(*[build(torch, item) for item in spec[1]])
    if tag == "E":
        return Ellipsis
    if tag == "F":
        return float(spec[1])
    if tag == "D":
        return dtype_of(torch, spec[1])
    if tag == "V":
        return torch.device("cpu")
    if tag == "M":
        value = getattr(torch, str(spec[1]), None)
        if not isinstance(value, torch.memory_format):
            raise BadPart("no memory format %s" % spec[1])
        return value
    raise BadPart("a description tagged %r" % (tag,))


def dtype_of(torch, name):
    value = getattr(torch, str(name), None)
    if not isinstance(value, torch.dtype):
        raise BadPart("no dtype %s" % name)
    return value


def build_tensor(torch, spec):
    shape = [int(n) for n in spec[1]]
    dtype = dtype_of(torch, spec[2])
    requires_grad = bool(spec[3])
    extra = spec[4] if len(spec) > 4 and isinstance(spec[4], dict) else {}
    strides = extra.get("strides")
    size = shape
    if strides is not None:
        size = [1 + sum((n - 1) * s for n, s in zip(shape, strides))] if all(shape) else [0]
    if dtype == torch.bool:
        base = torch.randint(0, 2, size).bool()
    elif dtype.is_floating_point or dtype.is_complex:
        base = torch.randn(tuple(size), dtype=dtype)
    else:
        low, high = (extra.get("range") or [0, 1])[:2]
        base = torch.randint(int(low), int(high) + 1, size, dtype=dtype)
    if strides is not None:
        base = base.as_strided(shape, strides)
    return base.detach().requires_grad_(requires_grad) if requires_grad else base


def median(values):
    ordered = sorted(values)
    if not ordered:
        return 0.0
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


if __name__ == "__main__":
    sys.exit(main())
