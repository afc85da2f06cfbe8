"""A loss that is NaN or infinite at backward(), reported once per process even when the job
carries on: divergence often shows only a few steps in, so every backward call is checked."""

import preflight_harness as core
from . import frames, shape_only

_state = {"backward": 0, "reported": False}


def on_backward(torch, args, kwargs, frame):
    """Called before each torch.autograd.backward; checks only a one-element tensor (the loss),
    which costs one tiny kernel and, on a GPU, one synchronisation."""
    _state["backward"] += 1
    if _state["reported"]:
        return
    tensors = args[0] if args else kwargs.get("tensors")
    if isinstance(tensors, (list, tuple)) and len(tensors) == 1:
        tensors = tensors[0]
    if not isinstance(tensors, torch.Tensor) or tensors.numel() != 1:
        return
    if not (tensors.is_floating_point() or tensors.is_complex()) or shape_only.is_fake(tensors):
        return  # a shape-only loss has no value (shape_only.py)
    with torch.no_grad():
        finite = bool(torch.isfinite(tensors).all())
    if finite:
        return
    _state["reported"] = True
    value = "nan" if bool(torch.isnan(tensors).any()) else "inf"
    core.emit("nonfinite", step=_state["backward"], value=value, stage=core.state.stage,
              where=frames.where(frame))
