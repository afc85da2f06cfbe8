"""Stage transitions (docs/harness.md "Stage rules"), including the validate-vs-evaluate call
made the moment evaluation work starts, so a failure there already carries the right stage."""

import os
import sys

import preflight_harness as core
from . import bytecode, frames

PRE_WORK = ("setup", "init", "data", "model")       # before any training or evaluation
EVAL_LIKE = ("validate", "evaluate", "predict", "checkpoint")
_PREDICT_WORDS = ("predict", "infer", "generate")


def enter(stage, why, frame):
    st = core.state
    if st.stage == stage:
        return
    st.stage = stage
    if os.getpid() != st.pid:
        return  # a forked worker (DataLoader) follows silently; the parent owns the timeline
    seen[stage] = seen.get(stage, 0) + 1
    core.emit("stage", stage=stage, why=why, where=frames.where(frame))


seen = {}  # stage -> times entered in this process (loop_cut waits for validate and checkpoint)


def on_data(why, frame):
    """Dataset/DataLoader construction, or a DataLoader's first batch, before any training."""
    st = core.state
    if not st.trained and st.stage in ("setup", "init", "model"):
        enter("data", why, frame)


def on_model(why, frame):
    st = core.state
    if not st.trained and st.stage in ("setup", "init", "data"):
        enter("model", why, frame)


def on_train(why, frame):
    """A backward pass or optimizer step."""
    st = core.state
    if st.stage == "train":
        return
    st.trained = True
    st.train_stack = frames.user_stack(frame)
    _decided.clear()
    enter("train", why, frame)


def on_train_mode(why, frame):
    """model.train() called by the job after training began: back to training."""
    st = core.state
    if st.trained and st.stage in ("validate", "evaluate", "predict"):
        enter("train", why, frame)


def on_eval_work(why, frame, grad_only):
    """Evaluation-mode work starts: model.eval() after training, or a forward pass with the
    model in eval mode or under no_grad. `grad_only`: only no_grad says so (model in train
    mode), which may also be a target network inside a training step. Decided again when
    the work comes from a new call site (the final evaluation after the last validation)."""
    st = core.state
    if st.stage == "checkpoint":
        return
    stack = frames.user_stack(frame)
    key = (tuple(stack), grad_only, st.trained, st.stage in EVAL_LIKE)
    if key in _decided:
        stage = _decided[key]
    else:
        stage = _decide_stage(stack, frame, grad_only)
        _decided[key] = stage
    if stage is not None:
        enter(stage, why, frame)


_decided = {}


def _decide_stage(stack, frame, grad_only):
    st = core.state
    if _looks_like_prediction(frame):
        return "predict"
    if not st.trained:
        # Before training: an evaluation script. A no_grad forward while an optimizer exists
        # is more likely part of the training step that is about to run.
        if not grad_only or st.optimizers == 0:
            return "evaluate"
        return None
    if grad_only and st.stage in EVAL_LIKE:
        return None  # already evaluating; no_grad alone says nothing new
    return decide(st.train_stack or [], stack, grad_only)


def on_checkpoint(frame):
    """torch.save starts; returns the stage to go back to when it returns."""
    previous = core.state.stage
    enter("checkpoint", "torch.save()", frame)
    return previous


def after_checkpoint(previous, frame):
    if previous is not None and core.state.stage == "checkpoint":
        enter(previous, "torch.save() returned", frame)


def _looks_like_prediction(frame):
    argv = getattr(sys, "argv", None) or [""]
    script = os.path.basename(argv[0] or "").lower()
    if script.startswith("predict") or script.startswith("infer"):
        return True
    f = frame
    while f is not None:
        if frames.is_user(f.f_code.co_filename):
            name = f.f_code.co_name.lower()
            if any(word in name for word in _PREDICT_WORDS):
                return True
        f = f.f_back
    return False


# --- validate or evaluate: do training and this evaluation share a loop? ------------------

def decide(train_stack, eval_stack, grad_only):
    """'validate' when a loop in the deepest user function shared by both call stacks
    contains both the training call and this evaluation call; 'evaluate' otherwise; None
    when a no_grad-only forward sits inside the training step's own loop."""
    common = []
    for (train_code, train_at), (eval_code, eval_at) in zip(train_stack, eval_stack):
        if train_code is not eval_code:
            break
        common.append((train_code, train_at, eval_at))
    if not common:
        return "evaluate"
    code, train_at, eval_at = common[-1]
    spans = bytecode.loops(code)
    if grad_only and len(common) == len(train_stack):
        inner = _innermost(spans, train_at)
        if inner is not None and inner[0] <= eval_at <= inner[1]:
            return None
    if train_at == eval_at:
        # The same call both trained and now evaluates (a phase loop, a fit() that
        # validates): evaluation within it is interleaved with training.
        return "validate"
    for start, end in spans:
        if start <= train_at <= end and start <= eval_at <= end:
            return "validate"
    return "evaluate"


def _innermost(spans, offset):
    best = None
    for start, end in spans:
        if start <= offset <= end and (best is None or end - start < best[1] - best[0]):
            best = (start, end)
    return best
