"""PyTorch patches, applied once `torch` has finished importing. Each wrapper does its
bookkeeping inside try/except and calls the original outside it, so the job sees exactly the
original behaviour and exceptions."""

import functools
import os
import sys
import time

import preflight_harness as core
from . import frames, shape_only, stages


class _Later(object):
    """A harness module imported at its first use (a job's first DataLoader iteration, forward
    pass or step), not as torch finishes importing: these modules are a few milliseconds of
    every torch job's start, and a job that never trains never needs them."""

    __slots__ = ("_module_name",)

    def __init__(self, name):
        self._module_name = name

    def __getattr__(self, attr):
        module = __import__(__package__ + "." + self._module_name, fromlist=["_"])
        globals()[self._module_name] = module
        return getattr(module, attr)


dataloader_cap = _Later("dataloader_cap")
endless = _Later("endless")
layers = _Later("layers")
loop_cut = _Later("loop_cut")
loss_check = _Later("loss_check")
measure = _Later("measure")
periodic = _Later("periodic")
report = _Later("report")

# Module classes that are not models although they are nn.Modules.
_NOT_MODELS = ("torchvision.transforms", "torchaudio.transforms")


def install(torch):
    st = core.state
    if st.torch_patched:
        return
    st.torch_patched = True
    core.guard("trace", _start_trace)
    for patch in (_patch_dataset, _patch_dataloader, _patch_module, _patch_autograd,
                  _patch_optimizer, _patch_save, _patch_load, _patch_fetch, _patch_autocast):
        try:
            patch(torch)
        except Exception as exc:
            core.harness_error(patch.__name__, exc)
    core.guard("shape_only", shape_only.install, torch)
    core.guard("virtual_gpu", __import__(__package__ + ".virtual_gpu", fromlist=["_"]).install, torch)
    core.guard("ranks", __import__(__package__ + ".ranks", fromlist=["_"]).install, torch)


def _start_trace():
    """The trace (trace.py), unless PREFLIGHT_TRACE=0 (benchmarks measure its cost with it)."""
    if os.environ.get("PREFLIGHT_TRACE", "1") == "0":
        return
    from . import trace
    trace.start()
    core.state.trace = trace


def _patch_dataset(torch):
    dataset = torch.utils.data.Dataset
    original = dataset.__new__
    plain = original is object.__new__

    def __new__(cls, *args, **kwargs):
        core.guard("Dataset", stages.on_data, "Dataset created: " + cls.__name__,
               sys._getframe(1))
        if plain:
            return original(cls)  # object.__new__ refuses extra arguments
        return original(cls, *args, **kwargs)

    dataset.__new__ = staticmethod(__new__)


def _patch_dataloader(torch):
    loader_cls = torch.utils.data.DataLoader
    original_init = loader_cls.__init__
    original_iter = loader_cls.__iter__

    @functools.wraps(original_init)
    def __init__(self, *args, **kwargs):
        core.guard("DataLoader", stages.on_data, "DataLoader created", sys._getframe(1))
        return original_init(self, *args, **kwargs)

    @functools.wraps(original_iter)
    def __iter__(self):
        core.guard("DataLoader", stages.on_data, "DataLoader iterated", sys._getframe(1))
        iterator = original_iter(self)
        limit = core.state.steps
        if limit > 0:
            try:
                return dataloader_cap.CappedIterator(iterator, self, limit)
            except Exception as exc:
                core.harness_error("DataLoader cap", exc)
        return iterator

    loader_cls.__init__ = __init__
    loader_cls.__iter__ = __iter__


def _patch_module(torch):
    module_cls = torch.nn.Module
    dataset_cls = torch.utils.data.Dataset
    is_grad_enabled = torch.is_grad_enabled
    torch_module_file = module_cls.train.__code__.co_filename
    original_init = module_cls.__init__
    original_call = module_cls.__call__
    original_train = module_cls.train
    original_to = module_cls.to
    original_cuda = module_cls.cuda
    depth = {"call": 0, "train": 0}

    def model_built(obj, frame):
        st = core.state
        if st.trained or st.stage not in ("setup", "init", "data"):
            return
        if type(obj).__module__.startswith(_NOT_MODELS):
            return
        if frames.inside_init_of(frame, (module_cls, dataset_cls), exclude=obj):
            return  # a submodule, or a transform built by a dataset
        stages.on_model("model created: " + type(obj).__name__, frame)

    @functools.wraps(original_init)
    def __init__(self, *args, **kwargs):
        core.guard("Module.__init__", model_built, self, sys._getframe(1))
        return original_init(self, *args, **kwargs)

    def forward_started(obj, frame):
        in_eval = not obj.training
        if not in_eval and is_grad_enabled():
            measure.note_model(obj)
            # The first forward pass of a training loop: the batch came, training begins.
            if core.state.stage == "data" and not frames.inside_init_of(frame, module_cls):
                stages.on_train("forward in training mode", frame)
            return
        if frames.inside_init_of(frame, module_cls):
            return  # a shape probe inside a model's constructor
        loop_cut.on_eval_forward(frame, obj, module_cls)
        stages.on_eval_work("forward in eval mode" if in_eval else "forward under no_grad",
                            frame, grad_only=not in_eval)

    traced_types = {}  # module class -> traced as a forward (not a transform)

    def forward_ended(tracer, obj, start, failed):
        cls = type(obj)
        traced = traced_types.get(cls)
        if traced is None:
            traced = traced_types[cls] = not cls.__module__.startswith(_NOT_MODELS)
        if traced:
            end = tracer.now()
            args = {"training": bool(obj.training)}
            if failed is not None:
                args["error"] = failed
            tracer.complete("forward " + cls.__name__, "forward", start, end, args)

    # torch.compile (PyTorch 2) traces the calls inside a compiled module, this wrapper among
    # them: there it steps aside, so that none of the harness's bookkeeping enters the graph.
    # The compiled module's own call, outside the graph, is seen as any module's.
    compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)

    @functools.wraps(original_call)
    def __call__(self, *args, **kwargs):
        if compiling():
            return original_call(self, *args, **kwargs)
        st = core.state
        if depth["call"] != 0 or st.trace is None:
            if depth["call"] == 0 and st.stage != "checkpoint":
                core.guard("Module.__call__", forward_started, self, sys._getframe(1))
            depth["call"] += 1
            try:
                return original_call(self, *args, **kwargs)
            finally:
                depth["call"] -= 1
        if st.stage != "checkpoint":
            core.guard("Module.__call__", forward_started, self, sys._getframe(1))
        tracer, failed = st.trace, None
        depth["call"] += 1
        start = tracer.now()
        if st.stage == "train":
            core.guard("trace forward", tracer.activity, start)
        try:
            return original_call(self, *args, **kwargs)
        except BaseException as exc:
            failed = type(exc).__name__
            raise
        finally:
            depth["call"] -= 1
            core.guard("trace forward", forward_ended, tracer, self, start, failed)

    def mode_set(obj, mode, frame):
        while frame is not None and frame.f_code.co_filename == torch_module_file:
            frame = frame.f_back  # Module.eval() calls train(False)
        if frame is None or isinstance(frames.self_of(frame), module_cls):
            return  # a module switching its own parts (frozen batch norm, ...)
        if not core.state.trained:
            return
        if mode:
            stages.on_train_mode("model.train()", frame)
        else:
            stages.on_eval_work("model.eval()", frame, grad_only=False)

    @functools.wraps(original_train)
    def train(self, mode=True):
        if depth["train"] == 0:
            core.guard("Module.train", mode_set, self, mode, sys._getframe(1))
        depth["train"] += 1
        try:
            return original_train(self, mode)
        finally:
            depth["train"] -= 1

    def moved(why):
        def wrap(original):
            @functools.wraps(original)
            def method(self, *args, **kwargs):
                core.guard("Module." + why, stages.on_model, "model." + why + "()",
                       sys._getframe(1))
                return original(self, *args, **kwargs)
            return method
        return wrap

    module_cls.__init__ = __init__
    module_cls.__call__ = __call__
    module_cls.train = train
    module_cls.to = moved("to")(original_to)
    module_cls.cuda = moved("cuda")(original_cuda)


def _patch_autograd(torch):
    # Tensor.backward() calls torch.autograd.backward(), so this sees both.
    original = torch.autograd.backward

    @functools.wraps(original)
    def backward(*args, **kwargs):
        if core.state.stage != "train":
            core.guard("backward", stages.on_train, "loss.backward()", sys._getframe(1))
        core.guard("backward", loss_check.on_backward, torch, args, kwargs, sys._getframe(1))
        core.guard("backward", dataloader_cap.mark_training)
        core.guard("backward", measure.note_backward)
        core.guard("backward", loop_cut.on_step, sys._getframe(1))
        core.guard("backward", periodic.on_first_step, sys._getframe(1))
        if core.guard("backward", endless.on_step, sys._getframe(1), "backward"):
            endless.end_job()  # the job repeats its steps and has no end of its own
        tracer = core.state.trace
        if tracer is None:
            return original(*args, **kwargs)
        start = tracer.now()
        core.guard("trace backward", tracer.activity, start)
        try:
            result = original(*args, **kwargs)
        except BaseException as exc:
            core.guard("trace backward", _backward_ended, tracer, start, type(exc).__name__)
            raise
        core.guard("trace backward", _backward_ended, tracer, start, None)
        return result

    torch.autograd.backward = backward


def _backward_ended(tracer, start, failed):
    end = tracer.now()
    tracer.complete("backward", "backward", start, end, {"error": failed} if failed else None)
    measure.trace_gpu(end)
    tracer.memory(end)


def _patch_optimizer(torch):
    optimizer_module = sys.modules.get("torch.optim.optimizer")
    optimizer_cls = torch.optim.Optimizer
    original_init = optimizer_cls.__init__
    register_pre = getattr(optimizer_module, "register_optimizer_step_pre_hook", None)
    register_post = getattr(optimizer_module, "register_optimizer_step_post_hook", None)

    started = {}  # id(optimizer) -> when its step() began, while tracing

    def step_started(optimizer=None, *_):
        if core.state.stage != "train":
            core.guard("optimizer.step", stages.on_train, "optimizer.step()", sys._getframe(1))
        if core.state.trace is not None:
            started.setdefault(id(optimizer), core.state.trace.now())
        core.guard("optimizer.step", measure.before_step, optimizer)

    def step_traced(tracer, optimizer, end):
        start = started.pop(id(optimizer), None)
        if start is not None:
            tracer.complete("optimizer step " + type(optimizer).__name__, "optimizer", start, end)
            tracer.step_ended(optimizer, end)
            tracer.memory(end)

    def step_ended(optimizer, *_):
        # One reading of the clock ends the step's span, its iteration's and the measured
        # step's, so that they nest.
        at = time.monotonic()
        if core.state.trace is not None:
            core.guard("trace optimizer", step_traced, core.state.trace, optimizer, at)
        core.guard("optimizer.step", measure.after_step, torch, optimizer, sys._getframe(1), at)
        core.guard("optimizer.step", loop_cut.on_step, sys._getframe(1))
        if core.guard("optimizer.step", endless.on_step, sys._getframe(1), "step"):
            endless.end_job()

    if register_pre is not None and register_post is not None:
        register_pre(step_started)
        register_post(step_ended)

    depth = {"step": 0}

    def wrap_step(cls):
        # PyTorch before 2.0 has no global step hooks: each optimizer class's step is wrapped.
        step = cls.step
        if getattr(step, "_preflight", False):
            return

        @functools.wraps(step)
        def wrapped(self, *args, **kwargs):
            depth["step"] += 1  # a subclass's step() calling its wrapped parent's
            try:
                if depth["step"] == 1:
                    step_started(self)
                result = step(self, *args, **kwargs)
            finally:
                depth["step"] -= 1
            if depth["step"] == 0:
                step_ended(self)
            return result

        wrapped._preflight = True
        cls.step = wrapped

    @functools.wraps(original_init)
    def __init__(self, *args, **kwargs):
        core.state.optimizers += 1
        result = original_init(self, *args, **kwargs)
        core.guard("optimizer", measure.note_optimizer, self)
        core.guard("optimizer", shape_only.note_optimizer, self)
        if register_post is None:
            core.guard("optimizer.step", wrap_step, type(self))
        return result

    optimizer_cls.__init__ = __init__
    import atexit
    atexit.register(_abandon_step)


def _abandon_step():
    """At exit, the measured step's window closed if a step ever opened it."""
    loaded = sys.modules.get(__package__ + ".measure")
    if loaded is not None:
        loaded.abandon()


def _patch_autocast(torch):
    """CUDA autocast entered by the job: on the platform its products run in half precision
    (layers.note_autocast). torch.autocast since 1.10, which torch.cuda.amp.autocast extends;
    before, torch.cuda.amp.autocast alone."""
    amp = getattr(getattr(torch, "amp", None), "autocast_mode", None)
    cls = getattr(amp, "autocast", None)
    if cls is None:
        cuda_amp = getattr(getattr(torch, "cuda", None), "amp", None)
        cls = getattr(cuda_amp, "autocast", None)
        if cls is None:
            return
        original_cuda = cls.__init__

        @functools.wraps(original_cuda)
        def cuda_init(self, *args, **kwargs):
            core.guard("autocast", layers.note_autocast, torch, "cuda", (None,) + args, kwargs)
            return original_cuda(self, *args, **kwargs)

        cls.__init__ = cuda_init
        return
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self, device_type, *args, **kwargs):
        core.guard("autocast", layers.note_autocast, torch, device_type, args, kwargs)
        return original(self, device_type, *args, **kwargs)

    cls.__init__ = __init__


def _patch_save(torch):
    original = torch.serialization.save

    @functools.wraps(original)
    def save(obj, f, *args, **kwargs):
        caller = sys._getframe(1)
        previous = core.guard("torch.save", stages.on_checkpoint, caller)
        tracer = core.state.trace
        start = tracer.now() if tracer is not None else None
        try:
            result = original(shape_only.saved(torch, obj), f, *args, **kwargs)
        except Exception as exc:
            if tracer is not None:
                core.guard("trace torch.save", _checkpoint_traced, tracer, "torch.save", f, start,
                           type(exc).__name__)
            core.guard("torch.save", report.escaped, exc, caller, "torch.save",
                   report.path_argument(f))
            raise
        if tracer is not None:
            core.guard("trace torch.save", _checkpoint_traced, tracer, "torch.save", f, start, None)
        core.guard("torch.save", stages.after_checkpoint, previous, caller)
        core.guard("torch.save", _note_save, f, caller)
        return result

    torch.serialization.save = save
    torch.save = save


def _note_save(f, caller):
    """A `save` event for a file path, so a checkpoint written where the platform discards it
    can be shown at its torch.save line."""
    path = report.path_argument(f)
    if path:
        core.emit("save", path=os.path.normpath(os.path.join(os.getcwd(), path)),
                  where=frames.where(caller))


def _patch_load(torch):
    """torch.load after training began is evaluation work (the best checkpoint reloaded for
    the final test), decided like a forward pass in eval mode; before training it says
    nothing (weights to resume from, or a tensor dataset)."""
    original = torch.load

    @functools.wraps(original)
    def load(*args, **kwargs):
        if core.state.trained:
            core.guard("torch.load", stages.on_eval_work, "torch.load() after training",
                       sys._getframe(1), False)
        tracer = core.state.trace
        if tracer is None:
            return shape_only.loaded(torch, original(*args, **kwargs))
        f = args[0] if args else kwargs.get("f")
        size = core.guard("trace torch.load", _file_size, f)
        start = tracer.now()
        try:
            result = original(*args, **kwargs)
        except Exception as exc:
            core.guard("trace torch.load", _checkpoint_traced, tracer, "torch.load", f, start,
                       type(exc).__name__, size)
            raise
        core.guard("trace torch.load", _checkpoint_traced, tracer, "torch.load", f, start, None,
                   size)
        return shape_only.loaded(torch, result)

    torch.load = load


def _file_size(f):
    path = report.path_argument(f)
    try:
        return os.stat(path).st_size if path else None
    except OSError:
        return None  # torch.load itself reports a missing file


def _checkpoint_traced(tracer, name, f, start, failed, size=None):
    """A checkpoint span: the bytes after a save, before a load (`size`)."""
    end = tracer.now()
    path = report.path_argument(f)
    if path and failed is None and name == "torch.save":
        try:
            size = os.stat(path).st_size
        except OSError:
            size = None
    args = {"path": os.path.normpath(os.path.join(os.getcwd(), path)) if path else None,
            "bytes": size, "seconds": round(end - start, 6)}
    if failed is not None:
        args["error"] = failed
    tracer.complete(name, "checkpoint", start, end, args)


def _patch_fetch(torch):
    """Each batch a DataLoader worker (or, without workers, the loader itself) fetches, traced
    in the process that fetches it."""
    if core.state.trace is None:
        return
    fetch = sys.modules.get("torch.utils.data._utils.fetch")
    for name in ("_MapDatasetFetcher", "_IterableDatasetFetcher"):
        cls = getattr(fetch, name, None)
        original = getattr(cls, "fetch", None)
        if original is not None and not getattr(original, "_preflight", False):
            cls.fetch = _traced_fetch(original)


def _traced_fetch(original):
    @functools.wraps(original)
    def fetch(self, possibly_batched_index):
        tracer, failed = core.state.trace, None
        start = tracer.now()
        try:
            return original(self, possibly_batched_index)
        except BaseException as exc:
            failed = type(exc).__name__
            raise
        finally:
            core.guard("trace fetch", _fetch_traced, tracer, start, possibly_batched_index, failed)

    fetch._preflight = True
    return fetch


def _fetch_traced(tracer, start, index, failed):
    end = tracer.now()
    tracer.in_worker()
    args = {}
    try:
        args["items"] = len(index)
    except TypeError:
        pass  # one item: batch_size=None
    if failed == "StopIteration":
        args["end"] = True  # an IterableDataset ran out
    elif failed is not None:
        args["error"] = failed
    tracer.complete("fetch batch", "data", start, end, args)
    tracer.memory(end)
