"""Clamping epochs and steps without editing the job (docs/harness.md "Clamping"): argparse
results, HuggingFace TrainingArguments, Lightning's Trainer and Keras's Model.fit/evaluate/
predict, each patched when its module finishes importing. Every value changed is a `clamp`
event. The DataLoader cap bounds each loop; this bounds how many loops there are where the
loop is a library's, which loop_cut cannot end. The job's own epoch and step counts keep their
values (a count flows into file names, ranges and schedules too): loop_cut ends the job's own
loops that use them. Intervals are still lowered, so that periodic work runs once."""

import functools
import os
import sys

import preflight_harness as core
from . import frames

# Lower-case names with '_' for '-'. Epoch counts get EPOCHS; step counts get
# EPOCHS * PREFLIGHT_STEPS (as many steps as the clamped epochs run with capped loaders);
# intervals (evaluate/save/log every N steps, batches per evaluation) get PREFLIGHT_STEPS, so
# that each happens at least once within the clamped steps.
EPOCH_NAMES = frozenset((
    "epochs", "num_epochs", "n_epochs", "max_epochs", "epoch", "nepochs", "num_train_epochs",
    "train_epochs", "niter"))  # niter: the epochs of PyTorch's DCGAN example
STEP_NAMES = frozenset((
    "max_steps", "num_steps", "steps", "iterations", "iters", "max_iters", "max_iter",
    "num_iterations", "train_steps", "total_steps"))
INTERVAL_NAMES = frozenset((
    "eval_interval", "eval_every", "eval_steps", "eval_iters", "val_interval", "val_every",
    "save_interval", "save_every", "save_steps", "checkpoint_interval", "checkpoint_every",
    "ckpt_interval", "ckpt_every", "log_interval", "log_every", "logging_steps",
    "print_every"))
EPOCHS = 2

# Watched modules (preflight_harness._ImportWatcher) → the patch applied when they load.
MODULES = ("argparse", "transformers.training_args", "pytorch_lightning", "lightning.pytorch",
           "keras")

_KEEP = object()
_settings = None
_seen = set()
_kept = {}  # dest -> (namespace, what, value, where) of a count kept as the job set it


class Settings(object):
    def __init__(self, per_loop, overrides):
        self.on = per_loop > 0  # PREFLIGHT_STEPS <= 0 asks for the whole run
        self.interval = per_loop
        self.steps = EPOCHS * per_loop
        self.overrides = overrides  # normalised name -> value (None: leave it alone)

    def limit(self, name):
        if not self.on:
            return None
        if name in EPOCH_NAMES:
            return EPOCHS
        if name in STEP_NAMES:
            return self.steps
        if name in INTERVAL_NAMES:
            return self.interval
        return None


def normal(name):
    return str(name).lstrip("-").replace("-", "_").lower()


def settings():
    global _settings
    if _settings is None:
        overrides = {}
        text = os.environ.get("PREFLIGHT_CLAMP_ARGS")
        if text:
            import json
            try:
                given = json.loads(text)
            except ValueError as exc:
                core.harness_error("PREFLIGHT_CLAMP_ARGS", exc)
                given = {}
            if isinstance(given, dict):
                overrides = dict((normal(k), v) for k, v in given.items())
        _settings = Settings(core.state.steps, overrides)
    return _settings


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def wanted(name, value, limit=None, counts=True):
    """The value `name` gets in the dry run: an override from job.yaml `dryrun.args`, else
    the clamp (`limit`, or the one its name implies) when a number is above it; _KEEP when it
    stays as it is. With `counts` false, epoch and step counts keep the job's value: the loops
    that use them are the job's own, which loop_cut ends."""
    s = settings()
    key = normal(name)
    if key in s.overrides:
        new = s.overrides[key]
        return _KEEP if new is None or new == value else new
    if not counts and (key in EPOCH_NAMES or key in STEP_NAMES):
        return _KEEP
    if limit is None or not s.on:
        limit = s.limit(key)
    if limit is None or not _number(value) or value <= limit:
        return _KEEP
    return type(value)(limit)


def user_where(frame):
    """The user frame a patched call came from; None when the job's code is not on the stack
    (a library or tool parsing its own arguments is left alone)."""
    where = frames.where(frame)
    return where if where and where.get("user") else None


def kind(what):
    """"epochs", "steps" or "interval" for a clamp named by one of those names (its last
    word: "argparse --niter", "keras Model.fit epochs"); None otherwise."""
    name = normal(what.replace(".", " ").split()[-1]) if what.strip() else ""
    for names, label in ((EPOCH_NAMES, "epochs"), (STEP_NAMES, "steps"),
                         (INTERVAL_NAMES, "interval")):
        if name in names:
            return label
    return None


def report(what, original, value, where, kind_of=None):
    key = (what, repr(original), repr(value), where and (where["file"], where["line"]))
    if key in _seen:
        return  # a fit() called once per epoch, say
    _seen.add(key)
    core.emit("clamp", what=what, kind=kind_of or kind(what), original=original, value=value,
              where=where)


def loaded(name, module):
    if core.state.phase == "setup":
        return  # the setup step (pip, data preparation) runs in full
    patch = {"argparse": _patch_argparse, "transformers.training_args": _patch_transformers,
             "pytorch_lightning": _patch_lightning, "lightning.pytorch": _patch_lightning,
             "keras": _patch_keras}.get(name)
    if patch is not None:
        core.guard("clamp " + name, patch, module)


# --- argparse ---------------------------------------------------------------------------

def _patch_argparse(argparse):
    cls = argparse.ArgumentParser
    original = cls.parse_known_args
    if getattr(original, "_preflight", False):
        return
    depth = [0]

    # parse_args() calls parse_known_args(); subparsers and intermixed parsing call it again
    # inside: only the outermost call's namespace is clamped.
    @functools.wraps(original)
    def parse_known_args(self, *args, **kwargs):
        depth[0] += 1
        try:
            result = original(self, *args, **kwargs)
        finally:
            depth[0] -= 1
        if depth[0] == 0:
            core.guard("clamp argparse", _clamp_namespace, self, result, sys._getframe(1))
        return result

    parse_known_args._preflight = True
    cls.parse_known_args = parse_known_args


def _clamp_namespace(parser, result, frame):
    namespace = result[0] if isinstance(result, tuple) and result else None
    values = getattr(namespace, "__dict__", None)
    if not values:
        return
    where = None
    for dest, value in sorted(values.items()):
        new = wanted(dest, value, counts=False)
        if new is _KEEP:
            if _kept_count(dest, value):
                where = where or user_where(frame)
                if where is None:
                    return
                count = ("argparse " + _option(_action(parser, dest), dest), value)
                _kept[dest] = (namespace, count[0], value, where)
                if count not in _seen:
                    _seen.add(count)
                    core.emit("count", what=count[0], kind=kind(count[0]), value=value, where=where)
            continue
        where = where or user_where(frame)
        if where is None:
            return
        action = _action(parser, dest)
        convert = getattr(action, "type", None)
        if isinstance(new, str) and callable(convert):
            new = convert(new)  # an override written as text, typed like the option
        setattr(namespace, dest, new)
        report("argparse " + _option(action, dest), value, new, where)


def lower_kept(names, done):
    """A loop the loop cut cannot end reads the kept counts among the attribute `names`:
    each still at the job's value is lowered to `done`, the iterations the loop trained, so that
    the loop's own test ends it, and reported as a clamp. True when one was."""
    lowered = False
    for dest in sorted(names):
        namespace, what, value, where = _kept.get(dest, (None, None, None, None))
        if namespace is None or getattr(namespace, dest, None) != value:
            continue
        setattr(namespace, dest, type(value)(max(1, done)))
        report(what, value, getattr(namespace, dest), where)
        lowered = True
    return lowered


def lower_globals(namespace, names, done, where):
    """The same for the module globals among `names` that a loop the loop cut cannot end reads
    (`while True: ... if iter_num > max_iters: break` at a script's top level): an epoch or step
    count above the sample is lowered to `done` in `namespace` (the module's globals), and
    reported as a clamp at `where`. True when one was."""
    s = settings()
    lowered = False
    for name in sorted(names):
        key = normal(name)
        value = namespace.get(name)
        if not s.on or key in s.overrides or not (key in EPOCH_NAMES or key in STEP_NAMES):
            continue
        if not _number(value) or value <= s.limit(key):
            continue
        namespace[name] = type(value)(max(1, done))
        report(name, value, namespace[name], where)
        lowered = True
    return lowered


def _kept_count(dest, value):
    """An epoch or step count above what the sampled run needs, which keeps its value: told as
    a `count` event, so that the estimate knows the full run's length even when the loop that
    uses it is a `while` the loop cut cannot count."""
    s = settings()
    key = normal(dest)
    if not s.on or key in s.overrides or not (key in EPOCH_NAMES or key in STEP_NAMES):
        return False
    return _number(value) and value > s.limit(key)


def _action(parser, dest, depth=0):
    """The action that stores `dest`, in the parser or (for `cmd train --epochs`) a subparser."""
    actions = list(getattr(parser, "_actions", ()))
    for action in actions:
        if action.dest == dest:
            return action
    for action in actions:
        choices = getattr(action, "choices", None)
        if isinstance(choices, dict) and depth < 3:
            for sub in choices.values():
                if hasattr(sub, "_actions"):
                    found = _action(sub, dest, depth + 1)
                    if found is not None:
                        return found
    return None


def _option(action, dest):
    strings = list(getattr(action, "option_strings", None) or ())
    for s in strings:
        if s.startswith("--"):
            return s
    return strings[0] if strings else dest


# --- HuggingFace transformers -----------------------------------------------------------

def _patch_transformers(module):
    cls = getattr(module, "TrainingArguments", None)
    original = getattr(cls, "__post_init__", None)
    if original is None or getattr(original, "_preflight", False):
        return

    # Trainer reads everything from its TrainingArguments (it builds one when given none),
    # so clamping them once they are validated covers both.
    @functools.wraps(original)
    def __post_init__(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        core.guard("clamp TrainingArguments", _clamp_training_args, self, sys._getframe(1))
        return result

    __post_init__._preflight = True
    cls.__post_init__ = __post_init__


def _clamp_training_args(args, frame):
    s = settings()
    where = user_where(frame)
    if where is None:
        return
    changes = []
    max_steps = getattr(args, "max_steps", None)
    if isinstance(max_steps, int):
        new = wanted("max_steps", max_steps)
        if new is _KEEP and s.on and max_steps <= 0 and "max_steps" not in s.overrides:
            new = s.steps  # -1: the epochs decide; a step count bounds them
        if new is not _KEEP:
            changes.append(("max_steps", max_steps if max_steps > 0 else None, new))
    for name in ("eval_steps", "save_steps", "logging_steps"):
        value = getattr(args, name, None)
        if _number(value) and 0 < value < 1 and normal(name) not in s.overrides:
            continue  # a ratio of the (clamped) total
        new = wanted(name, value)
        if new is not _KEEP:
            changes.append((name, value, new))
    for name, original, new in changes:
        object.__setattr__(args, name, new)  # some versions freeze TrainingArguments
        report("transformers TrainingArguments." + name, original, new, where)


# --- PyTorch Lightning ------------------------------------------------------------------

_LIMITS = ("limit_train_batches", "limit_val_batches", "limit_test_batches",
           "limit_predict_batches")


def _patch_lightning(module):
    cls = getattr(module, "Trainer", None)
    original = getattr(cls, "__init__", None)
    if original is None or getattr(original, "_preflight", False):
        return

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        clamped = core.guard("clamp Trainer", _clamp_trainer_kwargs, kwargs, sys._getframe(1))
        return original(self, *args, **(kwargs if clamped is None else clamped))

    __init__._preflight = True
    cls.__init__ = __init__


def _clamp_trainer_kwargs(kwargs, frame):
    """New keyword arguments for Trainer(...); never fast_dev_run, which skips checkpoints.
    A job that asked for fast_dev_run itself is left as it is."""
    s = settings()
    if kwargs.get("fast_dev_run"):
        return None
    where = user_where(frame)
    if where is None:
        return None
    out = dict(kwargs)
    changes = []

    def change(name, new):
        original = kwargs.get(name)
        if new is not _KEEP and new != original:
            out[name] = new
            changes.append((name, original, new))

    def explicit(name):
        return normal(name) in s.overrides

    for name in _LIMITS:
        value = kwargs.get(name)
        new = wanted(name, value)
        if new is _KEEP and s.on and not explicit(name):
            # None and floats are fractions of the loader (1.0: all of it); ints are batches.
            if value is None or (isinstance(value, float) and value > 0) or (
                    _number(value) and value > s.interval):
                new = s.interval
        change(name, new)
    epochs = kwargs.get("max_epochs")
    new = wanted("max_epochs", epochs)
    if new is _KEEP and s.on and not explicit("max_epochs") and (epochs is None or epochs < 0):
        new = EPOCHS  # unset means 1000 (or -1, unlimited)
    change("max_epochs", new)
    change("max_steps", wanted("max_steps", kwargs.get("max_steps")))
    interval = kwargs.get("val_check_interval")
    if isinstance(interval, int) and not isinstance(interval, bool) and s.on and \
            interval > s.interval and not explicit("val_check_interval"):
        change("val_check_interval", s.interval)  # above the batches per epoch is an error
    elif explicit("val_check_interval"):
        change("val_check_interval", wanted("val_check_interval", interval))
    every = kwargs.get("check_val_every_n_epoch")
    if _number(every) and s.on and every > EPOCHS and not explicit("check_val_every_n_epoch"):
        change("check_val_every_n_epoch", EPOCHS)  # else validation never runs
    elif explicit("check_val_every_n_epoch"):
        change("check_val_every_n_epoch", wanted("check_val_every_n_epoch", every))
    for name, original, new in changes:
        report("lightning Trainer " + name, original, new, where)
    return out


# --- Keras ------------------------------------------------------------------------------

def _patch_keras(keras):
    cls = getattr(keras, "Model", None)
    if cls is None:
        return
    import inspect
    for method in ("fit", "evaluate", "predict"):
        original = getattr(cls, method, None)
        if original is None or getattr(original, "_preflight", False):
            continue
        try:
            signature = inspect.signature(original)
        except (TypeError, ValueError):
            continue
        setattr(cls, method, _keras_wrapper(method, original, signature))


def _keras_wrapper(method, original, signature):
    depth = [0]

    @functools.wraps(original)
    def wrapper(self, *args, **kwargs):
        if depth[0] == 0:
            clamped = core.guard("clamp Model." + method, _clamp_keras_call, method, signature,
                             self, args, kwargs, sys._getframe(1))
            if clamped is not None:
                args, kwargs = clamped
        depth[0] += 1  # fit() may call evaluate() for validation
        try:
            return original(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    wrapper._preflight = True
    return wrapper


def _clamp_keras_call(method, signature, model, args, kwargs, frame):
    s = settings()
    where = user_where(frame)
    if where is None:
        return None
    bound = signature.bind_partial(model, *args, **kwargs)
    values = bound.arguments
    if method == "fit":
        steps = {"epochs": EPOCHS, "steps_per_epoch": s.interval}
        if values.get("validation_data") is not None:
            steps["validation_steps"] = s.interval
    else:
        steps = {"steps": s.interval}
    changes = []
    for name, limit in sorted(steps.items()):
        if name not in signature.parameters:
            continue
        value = values.get(name, signature.parameters[name].default)
        if value is signature.empty:
            value = None
        new = wanted(name, value, limit)
        if new is _KEEP and s.on and normal(name) not in s.overrides and value is None:
            new = limit  # None: the whole data set per epoch
        if new is not _KEEP and new != value:
            values[name] = new
            changes.append((name, value, new))
    if not changes:
        return None
    for name, original, new in changes:
        report("keras Model.%s %s" % (method, name), original, new, where)
    return bound.args[1:], bound.kwargs
