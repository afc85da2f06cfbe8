"""Virtual GPUs (docs/harness.md "Virtual GPUs"): when the platform gives the job GPUs
(PREFLIGHT_GPUS=N) and the local PyTorch has none, `torch.cuda` reports the profile's N
devices and every CUDA placement lands on the CPU, so the job's GPU code paths run unchanged.
Tensors stay CPU tensors: `tensor.device` and `tensor.is_cuda` still say so."""

import functools
import os
import time

import preflight_harness as core

# Compute capability by card name, for get_device_capability() and bf16 support; the profile
# names the card, not its capability. The first key in the name wins: "A100" before "A10".
_CAPABILITIES = (("H200", (9, 0)), ("H100", (9, 0)), ("L4", (8, 9)), ("A100", (8, 0)), ("A10", (8, 6)),
                 ("T4", (7, 5)), ("V100", (7, 0)), ("P40", (6, 1)), ("P100", (6, 0)),
                 ("M60", (5, 2)), ("K80", (3, 7)))
_FACTORIES = ("zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm",
              "tensor", "as_tensor", "arange", "range", "eye", "linspace", "logspace",
              "empty_strided", "normal", "zeros_like", "ones_like", "empty_like",
              "full_like", "rand_like", "randn_like", "randint_like", "scalar_tensor",
              "tril_indices", "triu_indices", "sparse_coo_tensor")
_TENSOR_NEW = ("new_tensor", "new_zeros", "new_ones", "new_empty", "new_full")
_LEGACY_TYPES = ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
                 "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor")


class VirtualDevices(object):
    """The profile's GPUs as the job sees them: count, name, memory and the current one."""

    def __init__(self, count, name, memory):
        self.count, self.name, self.memory = count, name, memory
        self.capability = next((cap for key, cap in _CAPABILITIES if key in name), (7, 0))
        self.current = 0

    def index(self, device, torch):
        """The device index that `device` (None, int, "cuda:1", torch.device) names; an
        index beyond the count fails as on the platform."""
        if device is None:
            return self.current
        if isinstance(device, str):
            device = torch.device(device)
        if isinstance(device, torch.device):
            if device.type != "cuda":
                raise ValueError("Expected a cuda device, but got: {}".format(device))
            device = self.current if device.index is None else device.index
        if not isinstance(device, int) or device < 0 or device >= self.count:
            raise RuntimeError("CUDA error: invalid device ordinal")
        return device


class DeviceProperties(object):
    """What torch.cuda.get_device_properties() returns for a virtual device."""

    def __init__(self, gpus):
        self.name, self.total_memory = gpus.name, gpus.memory
        self.major, self.minor = gpus.capability
        self.multi_processor_count = 56
        self.is_integrated = self.is_multi_gpu_board = 0
        # Read by PyTorch 2's compiler (torch._inductor) whenever CUDA is available; on
        # NVIDIA's builds gcnArchName (AMD's architecture) is the device's name.
        self.gcnArchName = gpus.name
        self.max_threads_per_multi_processor = 2048
        self.regs_per_multiprocessor = 65536
        self.warp_size = 32
        self.L2_cache_size = 40 * 2 ** 20

    def __repr__(self):
        return "_CudaDeviceProperties(name='%s', major=%d, minor=%d, total_memory=%dMB, " \
               "multi_processor_count=%d)" % (self.name, self.major, self.minor,
                                              self.total_memory // 2 ** 20,
                                              self.multi_processor_count)


def count():
    """PREFLIGHT_GPUS: how many GPUs the profile gives the job (0: none, or not a number)."""
    try:
        return max(0, int(os.environ.get("PREFLIGHT_GPUS", "0") or 0))
    except ValueError:
        return 0


def requested():
    """The profile's GPUs from the environment, or None when the job has none."""
    gpus = count()
    if gpus == 0:
        return None
    try:
        memory = int(os.environ.get("PREFLIGHT_GPU_MEMORY", ""))
    except ValueError:
        memory = 16 * 2 ** 30
    return VirtualDevices(gpus, os.environ.get("PREFLIGHT_GPU_NAME") or "Virtual GPU", memory)


def install(torch):
    """Registered in torch_hooks.install(); does nothing when real CUDA is there."""
    gpus = requested()
    if gpus is None or torch.cuda.is_available():
        return
    for patch in (_patch_cuda_module, _patch_placement, _patch_factories, _patch_load,
                  _patch_amp, _patch_parallel):
        try:
            patch(torch, gpus)
        except Exception as exc:
            core.harness_error("virtual_gpu " + patch.__name__, exc)
    if os.getpid() == core.state.pid:
        core.emit("virtual_gpu", count=gpus.count, name=gpus.name, memory=gpus.memory)


def _patch_cuda_module(torch, gpus):
    cuda = torch.cuda
    properties = DeviceProperties(gpus)

    def set_device(device):
        index = gpus.index(device, torch)
        gpus.current = index

    def get_device_properties(device=None):
        try:
            gpus.index(device, torch)
        except RuntimeError:
            raise AssertionError("Invalid device id") from None  # what torch.cuda raises here
        return properties

    class device(object):
        """torch.cuda.device(i): switches the current virtual device."""

        def __init__(self, device):
            self.idx = -1 if device is None or device == -1 else gpus.index(device, torch)
            self.prev_idx = -1

        def __enter__(self):
            if self.idx != -1:
                self.prev_idx, gpus.current = gpus.current, self.idx

        def __exit__(self, *exc):
            if self.prev_idx != -1:
                gpus.current = self.prev_idx
            return False

    class Event(object):
        """torch.cuda.Event timed with the host clock."""

        def __init__(self, enable_timing=False, blocking=False, interprocess=False):
            self.at = None

        def record(self, stream=None):
            self.at = time.perf_counter()

        def elapsed_time(self, end):
            return (end.at - self.at) * 1000.0

        def query(self):
            return True

        def synchronize(self):
            pass

        def wait(self, stream=None):
            pass

    def constant(value):
        """A function of its own for each name: torch._dynamo maps each torch.cuda function
        object to one rule, and refuses an object it finds under two names (PyTorch 2)."""
        def function(*args, **kwargs):
            return value
        return function

    functions = dict(
        is_available=lambda: True, is_initialized=lambda: True, init=constant(None),
        device_count=lambda: gpus.count, current_device=lambda: gpus.current,
        set_device=set_device, device=device, Event=Event,
        get_device_name=lambda device=None: get_device_properties(device).name,
        get_device_properties=get_device_properties,
        get_device_capability=lambda device=None: gpus.capability if device is None
        else (get_device_properties(device).major, get_device_properties(device).minor),
        is_bf16_supported=lambda: gpus.capability >= (8, 0),
        synchronize=constant(None), empty_cache=constant(None), ipc_collect=constant(None),
        memory_allocated=constant(0), max_memory_allocated=constant(0),
        memory_reserved=constant(0), max_memory_reserved=constant(0),
        memory_cached=constant(0), max_memory_cached=constant(0),
        reset_peak_memory_stats=constant(None), reset_max_memory_allocated=constant(None),
        reset_max_memory_cached=constant(None), reset_accumulated_memory_stats=constant(None),
        memory_stats=lambda *args, **kwargs: {},
        memory_summary=lambda *args, **kwargs: "virtual GPU: memory is not tracked\n",
        mem_get_info=lambda device=None: (gpus.memory, gpus.memory),
        manual_seed=constant(None), manual_seed_all=constant(None),
        seed=constant(None), seed_all=constant(None),
        initial_seed=lambda: torch.initial_seed(),
        get_rng_state=lambda device="cuda": torch.get_rng_state(),
        get_rng_state_all=lambda: [torch.get_rng_state() for _ in range(gpus.count)],
        set_rng_state=constant(None), set_rng_state_all=constant(None))
    for name, value in functions.items():
        setattr(cuda, name, value)
    for name in _LEGACY_TYPES:  # torch.cuda.FloatTensor(...), x.type(torch.cuda.LongTensor)
        if hasattr(torch, name):
            setattr(cuda, name, getattr(torch, name))


def _cuda_like(device, torch):
    """Is this a device argument naming a GPU: "cuda", "cuda:1", torch.device("cuda"), 1?"""
    if isinstance(device, str):
        return device.startswith("cuda")
    if isinstance(device, torch.device):
        return device.type == "cuda"
    return isinstance(device, int) and not isinstance(device, bool)


def _to_cpu(device, gpus, torch):
    """The CPU in place of a GPU device argument, after checking its index as CUDA would."""
    if _cuda_like(device, torch):
        gpus.index(device, torch)
        return torch.device("cpu")
    return device


def _device_keyword(original, gpus, torch):
    @functools.wraps(original)
    def call(*args, **kwargs):
        if kwargs.get("device") is not None:
            kwargs["device"] = _to_cpu(kwargs["device"], gpus, torch)
        return original(*args, **kwargs)
    return call


def _patch_placement(torch, gpus):
    tensor = torch.Tensor
    original_to, original_type = tensor.to, tensor.type
    legacy = dict(("torch.cuda." + n, "torch." + n) for n in _LEGACY_TYPES)

    @functools.wraps(original_to)
    def to(self, *args, **kwargs):
        if args and not isinstance(args[0], (torch.dtype, torch.Tensor)):
            args = (_to_cpu(args[0], gpus, torch),) + args[1:]
        if kwargs.get("device") is not None:
            kwargs["device"] = _to_cpu(kwargs["device"], gpus, torch)
        return original_to(self, *args, **kwargs)

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        gpus.index(device, torch)
        return self

    @functools.wraps(original_type)
    def type_(self, dtype=None, non_blocking=False, **kwargs):
        if dtype is None:
            return original_type(self)
        return original_type(self, legacy.get(dtype, dtype), non_blocking, **kwargs)

    tensor.to, tensor.cuda, tensor.type = to, cuda, type_
    tensor.pin_memory = lambda self, device=None: self  # a DataLoader's pin_memory=True
    for name in _TENSOR_NEW:
        setattr(tensor, name, _device_keyword(getattr(tensor, name), gpus, torch))
    storage = torch.storage
    for cls in (getattr(storage, "_StorageBase", None), getattr(storage, "TypedStorage", None)):
        if cls is not None:  # torch.load(map_location=lambda s, loc: s.cuda())
            cls.cuda = lambda self, device=None, non_blocking=False, **kwargs: self
    set_default = torch.set_default_tensor_type
    torch.set_default_tensor_type = functools.wraps(set_default)(
        lambda t: set_default(legacy.get(t, t)))


def _patch_factories(torch, gpus):
    for name in _FACTORIES:
        original = getattr(torch, name, None)
        if original is not None:
            setattr(torch, name, _device_keyword(original, gpus, torch))


def _map_location(location, gpus, torch):
    """torch.load's map_location with every GPU replaced by the CPU; None too, since a
    checkpoint written on a real GPU restores its storages to CUDA by default."""
    if location is None or _cuda_like(location, torch):
        return "cpu"
    if isinstance(location, dict):
        return dict((k, "cpu" if _cuda_like(v, torch) else v) for k, v in location.items())
    return location  # "cpu", or a function: storages' .cuda() returns them unchanged


def _patch_load(torch, gpus):
    original = torch.load

    @functools.wraps(original)
    def load(f, map_location=None, *args, **kwargs):
        return original(f, _map_location(map_location, gpus, torch), *args, **kwargs)

    torch.load = load


def _patch_amp(torch, gpus):
    # CUDA autocast stays as it is: with is_available() True it enables the CUDA autocast
    # state, which no CPU tensor consults, so it is a no-op. GradScaler asserts that what it
    # scales is on the GPU, so it runs disabled: scale() returns its input, step() steps.
    scaler = torch.cuda.amp.GradScaler
    original_init = scaler.__init__

    @functools.wraps(original_init)
    def __init__(self, *args, **kwargs):
        kwargs.pop("enabled", None)
        if len(args) >= 5:
            args = args[:4]
        original_init(self, *args, enabled=False, **kwargs)

    scaler.__init__ = __init__


def _patch_parallel(torch, gpus):
    # DataParallel splits the batch over its devices and gathers the outputs; on one CPU the
    # module runs once on the whole batch, which gives the same result.
    data_parallel = torch.nn.DataParallel

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    data_parallel.forward = forward
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available():
        return
    original_init = dist.init_process_group

    @functools.wraps(original_init)
    def init_process_group(backend=None, *args, **kwargs):
        if str(backend).lower() == "nccl":  # NCCL needs GPUs; gloo runs the same collectives
            backend = "gloo"
        return original_init(backend, *args, **kwargs)

    dist.init_process_group = init_process_group
    ddp = torch.nn.parallel.DistributedDataParallel
    original_ddp_init = ddp.__init__

    @functools.wraps(original_ddp_init)
    def __init__(self, module, device_ids=None, output_device=None, *args, **kwargs):
        # A module on a virtual GPU is a CPU module, which DDP accepts only without devices.
        return original_ddp_init(self, module, None, None, *args, **kwargs)

    ddp.__init__ = __init__
