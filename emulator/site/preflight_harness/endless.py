"""Jobs with no end of their own (docs/harness.md "Jobs without an end"): a `while True:` trainer
that stops only at a max_iters nobody sets, a library's loop that the loop cut cannot reach. The
DataLoader cap and the loop cut bound every loop they can; a job that still goes on training
well past its sample, repeating the same steps, is ended here so that the dry run judges what it
saw instead of running into its timeout.

Counts, never time: after LONG * PREFLIGHT_STEPS training steps (optimizer steps, or backward()
calls in a job without an optimizer) a profile function notes each line of the job's code that
makes a call, and each stage entered for the first time. Once QUIET * PREFLIGHT_STEPS further
steps have reached neither, the job is repeating itself: one `endless` event, and SystemExit(0)
raised at its next training step, so that its `finally` blocks, DataLoader workers and atexit
handlers end as at any exit. A job that swallows it is stopped with os._exit(0) after a few
tries."""

import os
import sys

import preflight_harness as core
from . import frames, stages

# Far more steps than any sampled loop runs (the loop cut's epochs wait for at most 10 epochs of
# PREFLIGHT_STEPS batches; a GAN steps two optimizers per batch), so that a job whose loops the
# harness bounds has ended before anything here starts.
LONG = 50
# Steps with nothing new before the job counts as repeating itself: longer than the loop cut's
# longest wait (10 epochs of a GAN's 2 optimizers), so that a bounded loop ends first.
QUIET = 25
_TRIES = 3  # SystemExit raised this many times and swallowed: os._exit


class _Run(object):
    def __init__(self):
        self.backwards = 0
        self.steps = 0              # optimizer steps
        self.watching = False
        self.last_new = 0           # the step count when something new was last reached
        self.stages = None          # the stages seen when watching began
        self.lines = set()          # (code, line) of the job's code that made a call
        self.user = {}              # code -> is the job's own
        self.ending = 0             # SystemExit raised so far
        self.blocked = False        # another profile function is set: nothing is watched


_run = _Run()


def count():
    """The job's training steps so far: its optimizer steps, or its backward() calls when no
    optimizer ever stepped (a hand-written update)."""
    return _run.steps if _run.steps else _run.backwards


def on_step(frame, kind):
    """A training step (`kind`: "backward" or "step") from `frame`; True when the job has
    been repeating itself long enough and should end now."""
    st = core.state
    if st.steps <= 0 or st.phase == "setup" or os.getpid() != st.pid or _run.blocked:
        return False
    if _run.ending:
        return True  # SystemExit was raised before and swallowed
    if kind == "step":
        _run.steps += 1
    else:
        _run.backwards += 1
    done = count()
    if not _run.watching:
        if done >= LONG * st.steps:
            _watch(done)
        return False
    new_stages = set(stages.seen) - _run.stages
    if new_stages:
        _run.stages |= new_stages
        _run.last_new = done
    if done - _run.last_new < QUIET * st.steps:
        return False
    _stop_watching()
    chain = _loop_around(frame)
    core.emit("endless", after=done, quiet=done - _run.last_new, where=frames.where(frame),
              loop=chain)
    return True


def end_job():
    """Ends the job from its training step: SystemExit, or os._exit once it was swallowed."""
    _run.ending += 1
    if _run.ending > _TRIES:
        core.guard("endless exit", core._at_exit)
        os._exit(0)
    raise SystemExit(0)


def _watch(done):
    if sys.getprofile() is not None:
        _run.blocked = True  # the job's own profiler: nothing tells new code from old
        return
    _run.watching = True
    _run.last_new = done
    _run.stages = set(stages.seen)
    sys.setprofile(_profile)


def _stop_watching():
    _run.watching = False
    if sys.getprofile() is _profile:
        sys.setprofile(None)
    _run.lines.clear()
    _run.user.clear()


def _profile(frame, event, arg):
    """Each call made from the job's code: a line not seen before is new code reached."""
    if event == "call":
        frame = frame.f_back
        if frame is None:
            return
    elif event != "c_call":
        return
    code = frame.f_code
    user = _run.user.get(code)
    if user is None:
        user = _run.user[code] = frames.is_user(code.co_filename)
    if user:
        key = (code, frame.f_lineno)
        if key not in _run.lines:
            _run.lines.add(key)
            _run.last_new = count()


def _loop_around(frame):
    """The first line of the innermost loop of the job's code around the step, or None (a
    library's loop)."""
    from . import loop_cut
    chain = loop_cut.loops_around(frame)
    if not chain:
        return None
    shape = chain[0][1]
    return dict(frames.frame_dict(shape.code, shape.line), what=shape.kind)
