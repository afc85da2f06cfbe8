"""Periodic work brought forward (docs/harness.md "Clamping"): evaluation, checkpoints, samples
and logs that a loop does every N iterations, with N in the job's own configuration object
rather than in argparse or a framework's arguments (a dataclass, a dict read from JSON or YAML,
a namespace, a trainer's attributes). At the first training step of a process, the objects the
job's frames on the stack hold (their locals, and the globals of their modules) and the objects
those hold are searched for fields named like intervals (clamp.INTERVAL_NAMES); each number
above PREFLIGHT_STEPS is lowered to it, so that `if it % cfg.save_every == 0:` runs within the
sampled steps. Each value changed is a `clamp` event of kind "interval". A checkpoint interval
goes back to the job's value once a checkpoint was written, so that a job that goes on (one with
no end of its own) writes it once."""

import os
import sys
import types
from collections.abc import Mapping

import preflight_harness as core
from . import clamp, frames, stages

_done = [False]
_MAX_OBJECTS = 400     # objects looked at, at most
_MAX_FIELDS = 200      # a larger dict or object is data, not configuration
_SKIP_MODULES = ("torch", "numpy", "pandas", "builtins", "collections", "typing", "logging",
                 "preflight_harness")


def on_first_step(frame):
    """Called at each training step; does its work at the first one of the process, and puts
    checkpoint intervals back once a checkpoint was written."""
    st = core.state
    if _done[0] and _saves and stages.seen.get("checkpoint", 0) > _saves_before[0]:
        _put_back()
    if _done[0] or st.steps <= 0 or st.phase == "setup" or os.getpid() != st.pid:
        return
    _saves_before[0] = stages.seen.get("checkpoint", 0)
    _done[0] = True
    if not clamp.settings().on:
        return
    seen = set()
    f = frame
    while f is not None:
        if frames.is_user(f.f_code.co_filename):
            _search_frame(f, seen)
        f = f.f_back


def _search_frame(frame, seen):
    try:
        names = list(frame.f_locals.items())
    except Exception:
        names = []
    where = frames.frame_dict(frame.f_code, frame.f_lineno)
    if id(frame.f_globals) not in seen:
        seen.add(id(frame.f_globals))
        names += list(frame.f_globals.items())
        _bring_forward(frame.f_globals, None, where)  # a script's `eval_interval = 2000`
    for name, value in names:
        if len(seen) > _MAX_OBJECTS:
            return
        if not isinstance(name, str) or name.startswith("__") or not _config_like(value):
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        for field, child in _bring_forward(value, name, where):
            if _config_like(child) and id(child) not in seen:
                seen.add(id(child))
                _bring_forward(child, field, where)


def _config_like(value):
    """A container of settings: a mapping, or an instance with attributes that is none of a
    module, class or function, nor a model, tensor, optimizer or dataset."""
    if isinstance(value, Mapping):  # a dict, or a config library's mapping
        return len(value) <= _MAX_FIELDS
    if isinstance(value, _NOT_SETTINGS):
        return False
    if (getattr(type(value), "__module__", "") or "").split(".")[0] in _SKIP_MODULES:
        return False
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, _torch_types(torch)):
        return False
    fields = getattr(value, "__dict__", None)
    return isinstance(fields, dict) and len(fields) <= _MAX_FIELDS


_NOT_SETTINGS = (type, types.ModuleType, types.FunctionType, types.MethodType,
                 types.BuiltinFunctionType)


def _torch_types(torch):
    return (torch.nn.Module, torch.Tensor, torch.optim.Optimizer, torch.utils.data.Dataset,
            torch.utils.data.DataLoader)


def _bring_forward(container, path, where):
    """Lowers the interval fields of `container` (named `path` in the job's code; None for a
    module's globals, named by themselves); returns its other fields as (path, value) for the
    search one level down."""
    is_dict = isinstance(container, Mapping)
    try:
        fields = list(container.items() if is_dict else vars(container).items())
    except Exception:
        return []
    children = []
    for key, value in fields:
        if not isinstance(key, str):
            continue
        if path is None:
            named = key
        else:
            named = "%s[%r]" % (path, key) if is_dict else "%s.%s" % (path, key)
        if clamp.normal(key) not in clamp.INTERVAL_NAMES:
            children.append((named, value))
            continue
        new = clamp.wanted(key, value)
        if new is clamp._KEEP:
            continue
        try:
            if is_dict:
                container[key] = new
            else:
                object.__setattr__(container, key, new)
        except Exception:
            continue  # a read-only mapping or attribute
        clamp.report(named, value, new, where, "interval")
        if clamp.normal(key).startswith(_CHECKPOINT_WORDS):
            _saves.append((container, key, value, is_dict))
    return children


# A checkpoint interval brought forward goes back to the job's own value once a checkpoint was
# written: the save has run, and a job that goes on (one with no end of its own, endless.py)
# writes it once instead of every PREFLIGHT_STEPS steps.
_CHECKPOINT_WORDS = ("save", "ckpt", "checkpoint")
_saves = []             # (container, key, the job's value, is a mapping)
_saves_before = [0]     # checkpoints written before the intervals were brought forward


def _put_back():
    for container, key, value, is_dict in _saves:
        try:
            if is_dict:
                container[key] = value
            else:
                object.__setattr__(container, key, value)
        except Exception:
            pass
    del _saves[:]
