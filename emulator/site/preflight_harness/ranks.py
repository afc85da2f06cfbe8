"""Ranks (docs/harness.md "Ranks"): a job launched with torchrun, torch.distributed.launch or
torch.multiprocessing.spawn runs its ranks in this one container, at most PREFLIGHT_RANKS
(default 4) of them, all nodes folded into one; each cap is a `clamp` of kind "ranks". Every
process that joins a process group reports its rank, so diagnosis follows rank 0."""

import functools
import os
import sys
import time

import preflight_harness as core
from . import virtual_gpu

DEFAULT_CAP = 4
_WORLD = "PREFLIGHT_WORLD_CAP"  # "asked:ran", set for spawned ranks when capped


def cap():
    try:
        return max(1, int(os.environ.get("PREFLIGHT_RANKS", DEFAULT_CAP)))
    except ValueError:
        return DEFAULT_CAP


def _clamp(what, original, value):
    from . import clamp
    clamp.report(what, original, value, None, "ranks")


# --- torchrun and torch.distributed.launch ----------------------------------------------------

def patch_launcher(run_module):
    """torch.distributed.run: both launchers build their configuration with config_from_args."""
    original = run_module.config_from_args

    @functools.wraps(original)
    def config_from_args(args):
        core.guard("torchrun", _fold, args)
        return original(args)

    run_module.config_from_args = config_from_args


def _fold(args):
    per_node = _procs_per_node(getattr(args, "nproc_per_node", "1"))
    nodes = str(getattr(args, "nnodes", "1"))
    most_nodes = int(nodes.split(":")[-1])
    if most_nodes > 1:
        # The other nodes would never join: this container is every node.
        _clamp("torchrun --nnodes", nodes, 1)
        args.nnodes, args.node_rank = "1", 0
        args.rdzv_backend, args.rdzv_endpoint = "static", ""
        args.master_addr = "127.0.0.1"
    asked = per_node * most_nodes
    ran = min(asked, cap())
    if asked != ran:
        _clamp("torchrun ranks (nodes x nproc_per_node)", asked, ran)
    args.nproc_per_node = str(ran)


def _procs_per_node(value):
    value = str(value)
    if value.isdigit():
        return int(value)
    gpus = virtual_gpu.count()  # "gpu", "auto": the visible GPUs
    if gpus:
        return gpus
    return (os.cpu_count() or 1) if value == "auto" else 1


# --- torch.multiprocessing.spawn ----------------------------------------------------------------

def install(torch):
    spawn_module = sys.modules.get("torch.multiprocessing.spawn")
    if spawn_module is not None:
        _patch_spawn(torch, spawn_module)
    dist = getattr(torch, "distributed", None)
    if dist is not None and dist.is_available():
        _patch_process_group(dist)


def _patch_spawn(torch, spawn_module):
    original_start = spawn_module.start_processes
    original_wrap = spawn_module._wrap

    @functools.wraps(original_start)
    def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
        ran = core.guard("spawn", _cap_spawn, nprocs)
        return original_start(fn, args, ran or nprocs, join, daemon, start_method)

    @functools.wraps(original_wrap)
    def _wrap(fn, i, args, error_queue):
        # In the rank: the job's function fails inside _wrap, which hands the traceback to
        # the parent and exits; report it here first, with this rank's stage and frames.
        return original_wrap(_reporting(fn), i, args, error_queue)

    spawn_module.start_processes = start_processes
    spawn_module._wrap = _wrap
    if getattr(torch.multiprocessing, "start_processes", None) is original_start:
        torch.multiprocessing.start_processes = start_processes


def _cap_spawn(nprocs):
    ran = min(nprocs, cap())
    if ran < nprocs:
        _clamp("torch.multiprocessing.spawn nprocs", nprocs, ran)
        os.environ[_WORLD] = "%d:%d" % (nprocs, ran)  # the ranks inherit it
    return ran


def _reporting(fn):
    def run(*args):
        try:
            return fn(*args)
        except Exception as exc:
            core.guard("spawn", _report, exc)
            raise
    return run


def _report(exc):
    from . import report
    report.uncaught(exc, exc.__traceback__, "spawn")


# --- process groups -------------------------------------------------------------------------------

def _patch_process_group(dist):
    original = dist.init_process_group

    @functools.wraps(original)
    def init_process_group(*args, **kwargs):
        args, kwargs = core.guard("init_process_group", _capped_world, args, kwargs) or (args, kwargs)
        result = original(*args, **kwargs)
        core.guard("init_process_group", _report_rank, dist)
        return result

    dist.init_process_group = init_process_group


def _capped_world(args, kwargs):
    """A spawned rank asking for the world size before the cap gets the capped one."""
    text = os.environ.get(_WORLD)
    if not text:
        return args, kwargs
    asked, ran = (int(n) for n in text.split(":"))
    if kwargs.get("world_size") == asked:
        kwargs = dict(kwargs, world_size=ran)
    elif len(args) > 3 and args[3] == asked:  # backend, init_method, timeout, world_size
        args = args[:3] + (ran,) + args[4:]
    if os.environ.get("WORLD_SIZE") == str(asked):
        os.environ["WORLD_SIZE"] = str(ran)
    return args, kwargs


def _report_rank(dist):
    st = core.state
    core.emit("rank", rank=dist.get_rank(), world=dist.get_world_size(),
              started=round(time.time() - (time.monotonic() - st.t0), 6))
