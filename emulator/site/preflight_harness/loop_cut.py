"""Ending any loop that trains once the sample is done, without editing the job (docs/harness.md
"Sampling: loops that train"). The DataLoader cap bounds loops over a DataLoader; this bounds
every other loop: batches taken by index, `while step < max_steps`, epochs read from the
environment or a config file.

At each training step (backward() or optimizer.step()) the loops around the innermost user
frame are found with `dis` (bytecode.loops). Each gets a watch: a trace function set on that one
frame counts its iterations that trained. The innermost loop ends after PREFLIGHT_STEPS of them
(2·PREFLIGHT_STEPS when no loop encloses it), each enclosing loop after clamp.EPOCHS once
validation and a checkpoint ran in it (10 at most); an evaluation loop after training gets
PREFLIGHT_STEPS. A for loop ends through its iterator, made to end during its last iteration;
a while loop by a jump (f_lineno) to the line after it when its next iteration starts. What
follows the loop (validation, saving, the final evaluation) runs as usual. A loop that cannot
be ended safely runs in full and is reported once, with the reason."""

import dis
import gc
import operator
import sys
import types
import warnings

import preflight_harness as core
from . import bytecode, clamp, frames, stages

_watches = {}    # id(frame) -> [Watch], innermost loop first; emptied when the loop ends
_shapes = {}     # (code, start) -> Shape
_noted = set()   # (code, start) of loops reported as not shortened
_reported = set()  # (code, start) of loops reported as ended
_counts = {}     # (code, start) -> (end, iterations run, iterations it would have run) of loops ended
_pulled = [None]  # (id, code, offset) of the user frame that took the latest capped batch
_installed = [False]
_previous = [None]   # the harness's line watch (watch.py) tracing before us: chained
_chained = {}        # id(frame) -> the frame's own f_trace before ours (the line watch's)

_PASS_THROUGH = ("NOP", "END_FOR", "POP_BLOCK", "CACHE", "EXTENDED_ARG")


class Shape(object):
    """What `dis` says about one loop: where it starts and ends, where it goes on after it."""

    def __init__(self, code, start, end):
        self.code, self.start, self.end = code, start, end
        instructions = list(dis.get_instructions(code))
        at = dict((ins.offset, ins) for ins in instructions)
        starts = [(o, number) for o, number in dis.findlinestarts(code) if number is not None]
        # A jump's target is the EXTENDED_ARG before an instruction with a long argument (the
        # FOR_ITER of a long loop body): the loop starts at any of these offsets.
        self.starts = set([start])
        head = at.get(start)
        while head is not None and head.opname in ("EXTENDED_ARG", "NOP"):
            head = at.get(min([o for o in at if o > head.offset] or [head.offset + 1]))
            if head is not None:
                self.starts.add(head.offset)
        self.is_for = head is not None and head.opname == "FOR_ITER"
        self.line = _line_at(starts, start)
        covered = [number for o, number in starts if start <= o <= end]
        self.line = min([self.line] + covered) if self.line is not None else (
            min(covered) if covered else None)
        head_first = min([o for o, number in starts if number == self.line and o <= start] or [start])
        self.head = self.is_for or _tests_exit(instructions, start, starts, end)
        self.exit_line, self.why = _exit_line(instructions, at, starts, head_first, start, end)
        self.kind = "for loop" if self.is_for else "while loop"
        self.owned = _handlers_of(code, instructions, start, end)
        if self.is_for and sys.version_info[:2] == (3, 8):
            # 3.8's f_lineno setter corrupts the stack when it leaves a for loop; such a loop
            # ends only through its iterator.
            self.exit_line = None
            self.why = "Python 3.8 cannot leave a for loop from a trace function safely"


def _handlers_of(code, instructions, start, end):
    """Offsets after the loop that still belong to it: from 3.11 the handlers of a try inside
    the body are laid out after the function's code and jump back into the loop."""
    entries = getattr(dis.Bytecode(code), "exception_entries", None) or ()
    index = dict((ins.offset, i) for i, ins in enumerate(instructions))
    owned, todo = set(), [e.target for e in entries if start <= e.start <= end and e.target > end]
    while todo:
        offset = todo.pop()
        if offset in owned or offset not in index or start <= offset <= end:
            continue
        owned.add(offset)
        for entry in entries:  # a handler's own cleanup handler
            if entry.start <= offset < entry.end and entry.target > end:
                todo.append(entry.target)
        i = index[offset]
        ins = instructions[i]
        if ins.opcode in bytecode.JUMPS and isinstance(ins.argval, int):
            todo.append(ins.argval)
            if bytecode.ends_flow(ins):
                continue
        if ins.opname not in bytecode.STOPS and i + 1 < len(instructions):
            todo.append(instructions[i + 1].offset)
    return owned


_ATTRIBUTES = ("LOAD_ATTR", "LOAD_METHOD")  # `opts.max_steps` reads "max_steps"
_GLOBALS = ("LOAD_GLOBAL", "LOAD_NAME")     # a script's top-level `max_iters`


def _names_in(shape, opnames):
    """The names the loop's code reads with the instructions `opnames`."""
    return set(ins.argval for ins in dis.get_instructions(shape.code)
               if shape.start <= ins.offset <= shape.end and ins.opname in opnames
               and isinstance(ins.argval, str))


def _line_at(starts, offset):
    line = None
    for o, number in starts:
        if o > offset:
            break
        line = number
    return line


def _tests_exit(instructions, start, starts, end):
    """True when the loop's first line tests whether to go on (a while loop's condition before
    Python 3.11): an iteration starting there may still end the loop by itself."""
    next_line = min([o for o, _ in starts if o > start] or [end])
    return any(ins.opcode in bytecode.JUMPS and isinstance(ins.argval, int) and ins.argval > end
               for ins in instructions if start <= ins.offset < next_line)


def _exit_line(instructions, at, starts, head_first, start, end):
    """The line where execution goes on when the loop is done, and None with the reason when
    no line can be jumped to safely (the loop ends its function or the body of another)."""
    targets = [ins.argval for ins in instructions
               if head_first <= ins.offset <= end and ins.opcode in bytecode.JUMPS
               and isinstance(ins.argval, int) and ins.argval > end]
    last = at.get(end)
    if last is not None and "IF" in last.opname:
        targets.append(min([o for o in at if o > end] or [end]))  # a condition at the bottom
    if not targets:
        return None, "it has no exit but an exception or a return"
    offset = min(targets)
    for _ in range(8):
        ins = at.get(offset)
        if ins is None:
            return None, "its exit could not be found in the bytecode"
        if ins.opname in _PASS_THROUGH or (ins.opname == "POP_TOP" and _after_end_for(at, offset)):
            offset = min([o for o in at if o > offset] or [offset])
            continue
        if ins.opname in bytecode.UNCONDITIONAL and isinstance(ins.argval, int):
            if ins.argval <= offset:
                return None, "it is the last statement of the loop around it"
            offset = ins.argval
            continue
        break
    line = dict(starts).get(offset)
    first = min([o for o, number in starts if number == line]) if line is not None else None
    if line is None or first != offset:
        # The line there also runs inside the loop (an implicit return carries the line of
        # the last statement): f_lineno would land in the loop again.
        return None, "it is the last statement of its function"
    return line, None


def _after_end_for(at, offset):
    previous = [o for o in at if o < offset]
    return bool(previous) and at[max(previous)].opname == "END_FOR"


def shape_of(code, start, end):
    key = (code, start)
    shape = _shapes.get(key)
    if shape is None:
        shape = _shapes[key] = Shape(code, start, end)
    return shape


class Watch(object):
    """One running loop that trained: its iterations that trained, and when to end it."""

    def __init__(self, frame, shape, limit, kind):
        self.frame, self.shape, self.limit, self.kind = frame, shape, limit, kind
        self.stages_before = _work_seen()
        self.done = 0              # iterations in which a training step ran
        self.trained_now = False   # the current iteration has counted
        self.pending = False       # end at the first line of the next iteration
        self.jump = False          # a for loop whose iterator cannot be ended: jump instead

    def step(self):
        if not self.trained_now:
            self.trained_now = True
            self.done += 1

    def line(self, frame, at):
        """A line event in the loop's frame; True when this watch is over."""
        shape = self.shape
        if at in shape.owned:
            return False  # an except clause of the body, laid out after the loop
        if not shape.start <= at <= shape.end:
            return True  # the loop ended (its condition, a break, exhaustion, or our jump)
        full = self.full()
        if shape.is_for and full and not self.jump and not _in_inner_for(shape, at):
            return self.exhaust(frame)
        if at in shape.starts:
            if not full:
                self.trained_now = False  # the next iteration
                return False
            if shape.head:
                self.pending = True  # the loop's own test or FOR_ITER may still end it
                return False
            return self.leave(frame)
        if self.pending:
            return self.leave(frame)
        return False

    def full(self):
        """Enough iterations. An epoch loop also waits (up to EPOCHS_AT_MOST) for validation
        and a checkpoint to have run inside it: a config's `eval_every: 5` is no clamped
        name, and the run should still reach those stages."""
        if self.done < self.limit:
            return False
        if self.kind != "epochs" or self.done >= EPOCHS_AT_MOST or _distributed():
            return True
        now = _work_seen()
        return all(now[i] > self.stages_before[i] for i in range(len(now)))

    def exhaust(self, frame):
        """Ends a for loop after the current iteration: its iterator, the top one on the
        frame's value stack, is made to end, so FOR_ITER leaves the loop as if it had."""
        iterator = _top_iterator(frame)
        result = _exhausted(iterator, 0) if iterator is not None else None
        if result is None:
            self.jump = True  # not an iterator the harness knows how to end
            return False
        had_more, left, last = result
        if had_more:
            # original: the iterations it would have run from the first that trained on
            self.report("exhausted its iterator", None if left is None else self.done + left, last)
        return True

    def leave(self, frame):
        shape = self.shape
        if shape.exit_line is None:
            # No line to jump to: a count of the job's own that the loop reads is lowered to
            # what it ran, so that its own test ends it (the value changed, as a last resort).
            where = frames.frame_dict(shape.code, shape.line)
            if clamp.lower_kept(_names_in(shape, _ATTRIBUTES), self.done) or clamp.lower_globals(
                    frame.f_globals, _names_in(shape, _GLOBALS), self.done, where):
                return True
            return self.not_ended(shape.why)
        try:
            with warnings.catch_warnings():
                # 3.12+ warns when it binds locals the target line assumes to None
                warnings.simplefilter("ignore")
                frame.f_lineno = shape.exit_line
        except ValueError as exc:
            return self.not_ended(str(exc))
        self.report("jumped to line %d" % shape.exit_line, None)
        return True

    def report(self, how, total, last=None):
        """`total`: the iterations the loop would have run; `last`: the value its loop variable
        would have ended on (a range's or a list's last whole number), which a file the full run
        writes may be named after."""
        key = (self.shape.code, self.shape.start)
        if key in _reported:
            return  # one event per loop: an inner loop ends again in every epoch
        _reported.add(key)
        if total:
            _counts[key] = (self.shape.end, self.done, total)
        core.emit("cut", what=self.shape.kind, kind=self.kind, after=self.done,
                  original=total, last=last, how=how,
                  where=frames.frame_dict(self.shape.code, self.shape.line))

    def not_ended(self, why):
        note(self.shape, why, self.done)
        return True


EPOCHS_AT_MOST = 10
_WORK = ("validate", "checkpoint")


def _work_seen():
    return tuple(stages.seen.get(stage, 0) for stage in _WORK)


def _distributed():
    """True in a process of a distributed job. Each rank ends its loops alone, and only rank 0
    may validate and save: an epoch loop there ends after clamp.EPOCHS in every rank, so that
    the ranks' collectives still pair up."""
    dist = sys.modules.get("torch.distributed")
    try:
        return bool(dist is not None and dist.is_available() and dist.is_initialized()
                    and dist.get_world_size() > 1)
    except Exception:
        return False


def _in_inner_for(shape, at):
    """True when `at` is inside a for loop nested in this one (another iterator on top)."""
    for start, end in bytecode.loops(shape.code):
        if shape.start < start and end <= shape.end and start <= at <= end and \
                shape_of(shape.code, start, end).is_for:
            return True
    return False


_SEQUENCE_ITERATORS = ("range_iterator", "longrange_iterator", "list_iterator", "tuple_iterator")


def _exhausted(iterator, depth):
    """Makes `iterator` end; (had more items, items it had left or None, its sequence's last
    item when a whole number, else None), or None when it is not one the harness can end (a
    custom class, itertools.count, ...)."""
    name = type(iterator).__name__
    if name in _SEQUENCE_ITERATORS:
        left = operator.length_hint(iterator)
        reduced = iterator.__reduce__()
        sequence = reduced[1][0] if len(reduced) > 1 and reduced[1] else None
        last = sequence[-1] if sequence else None
        iterator.__setstate__(len(sequence) if sequence is not None else sys.maxsize)
        whole = isinstance(last, int) and not isinstance(last, bool)
        return left > 0, left, last if whole else None
    if isinstance(iterator, types.GeneratorType):
        if iterator.gi_running:
            return None
        iterator.close()
        return True, None, None
    if name in ("enumerate", "zip", "map", "filter", "reversed") and depth < 3:
        for inner in gc.get_referents(iterator):
            if hasattr(type(inner), "__next__"):
                result = _exhausted(inner, depth + 1)
                if result is not None:
                    return result
    return None


def _top_iterator(frame):
    """The topmost iterator on a frame's value stack, read during a line event: the iterator
    of the innermost for loop running there. Before 3.11 the trace call saves the stack top in
    the frame, so gc sees the stack; from 3.11 the frame's data is read with ctypes, once its
    layout is checked against the frame's own code and frame object."""
    if sys.version_info < (3, 11):
        found = [o for o in gc.get_referents(frame) if hasattr(type(o), "__next__")]
        return found[-1] if found else None
    if sys.version_info >= (3, 14):
        return None
    import ctypes
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        return None
    words = ctypes.POINTER(ctypes.c_void_p)
    data = ctypes.cast(id(frame) + _FRAME_DATA_AT, words).contents.value
    if not data:
        return None
    slots = ctypes.cast(data, words)
    code_at, frame_at = (4, 5) if sys.version_info < (3, 12) else (0, 6)
    if slots[code_at] != id(frame.f_code) or slots[frame_at] != id(frame):
        return None  # not the layout this was written for (a debug or free-threaded build)
    top = ctypes.cast(data + 64, ctypes.POINTER(ctypes.c_int)).contents.value
    code = frame.f_code
    base = len(code.co_varnames) + len([c for c in code.co_cellvars if c not in code.co_varnames]) \
        + len(code.co_freevars)
    for index in range(top - 1, base - 1, -1):
        pointer = slots[_LOCALSPLUS + index]
        if pointer:
            value = ctypes.cast(pointer, ctypes.py_object).value
            if hasattr(type(value), "__next__"):
                return value
    return None


_FRAME_DATA_AT = 3 * 8   # PyFrameObject: ob_refcnt, ob_type, f_back, then f_frame
_LOCALSPLUS = 9          # _PyInterpreterFrame: 8 pointers, stacktop and flags, localsplus


def note(shape, why, after):
    key = (shape.code, shape.start)
    if key not in _noted:
        _noted.add(key)
        core.emit("uncut", what=shape.kind, why=why, after=after,
                  where=frames.frame_dict(shape.code, shape.line))


# --- training steps ---------------------------------------------------------------------

def pulled(frame):
    """A capped DataLoader yielded a batch to the loop in `frame` (or a library under it)."""
    f = frame
    while f is not None and not frames.is_user(f.f_code.co_filename):
        f = f.f_back
    _pulled[0] = (id(f), f.f_code, f.f_lasti) if f is not None else None


def _fed_by_loader(frame, shape):
    """A for loop over a capped DataLoader (its FOR_ITER took the batch): the cap bounds it. A
    while loop calling next() on one is not bounded by it: it may start a new iterator."""
    last = _pulled[0]
    return shape.is_for and last is not None and last[0] == id(frame) and \
        last[1] is frame.f_code and last[2] in shape.starts


def accumulation(frame):
    """How many times more backward passes the job's own optimizer step holds than the
    sampled run's: a loop ended early around backward() but not around `frame`'s step, inside
    a loop that is (gradient accumulation, `for micro in range(40)`), counts its original
    iterations over those it ran. 1 when there is none."""
    f = frame
    while f is not None and not frames.is_user(f.f_code.co_filename):
        f = f.f_back
    if f is None:
        return 1.0
    at = f.f_lasti
    around = [s for s in bytecode.loops(f.f_code) if s[0] <= at <= s[1]]
    times = 1.0
    for (code, start), (end, ran, total) in _counts.items():
        if code is f.f_code and not start <= at <= end and ran and \
                any(s[0] <= start and end <= s[1] for s in around):
            times *= float(total) / ran
    return times


def loops_around(frame):
    """[(frame, Shape)] of the loops around a training step, innermost first."""
    found = []
    f = frame
    while f is not None:
        code = f.f_code
        if frames.is_user(code.co_filename):
            at = f.f_lasti
            spans = bytecode.loops(code)
            inside = sorted((s for s in spans if s[0] <= at <= s[1]), key=lambda s: s[1] - s[0])
            for start, end in inside:
                found.append((f, shape_of(code, start, end)))
        f = f.f_back
    return found


def on_eval_forward(frame, module, module_cls):
    """A forward pass in eval mode or under no_grad after training began (validation, the
    final evaluation): its innermost loop gets PREFLIGHT_STEPS iterations, as a DataLoader
    loop would. Before training (data preparation, an evaluation script) nothing is counted.
    A model's method that calls its own parts in a loop (greedy decoding, beam search, an
    unrolled recurrence) computes one result: its loop is not a loop over batches, and only
    the loops of the code that called the method count."""
    if not core.state.trained:
        return
    owner = frames.self_of(frame)
    if isinstance(owner, module_cls) and owner is not module:
        while frame is not None and frames.self_of(frame) is owner:
            frame = frame.f_back  # the model's methods, calling one another
    if frame is not None:
        on_step(frame, evaluation=True)


def on_step(frame, evaluation=False):
    """backward() or optimizer.step() was called from `frame` (or below it)."""
    st = core.state
    if st.steps <= 0 or st.phase == "setup":
        return
    chain = loops_around(frame)
    if evaluation:
        chain = chain[:1]  # the loops around an evaluation are not epochs
    if not chain:
        return
    for level, (f, shape) in enumerate(chain):
        watch = _find(f, shape)
        if watch is None:
            if level == 0 and _fed_by_loader(f, shape):
                continue  # the DataLoader cap bounds it
            if level > 0:
                limit, kind = clamp.EPOCHS, "epochs"
            elif len(chain) > 1 or evaluation:
                limit, kind = st.steps, "batches"  # an epoch's batches, not the run's steps
            else:
                limit, kind = clamp.EPOCHS * st.steps, "steps"
            watch = _start(f, shape, limit, kind)
            if watch is None:
                return
        elif level > 0 and watch.kind != "epochs":
            # First seen stepping by itself (a step before the batch loop): a loop around
            # another one counts epochs.
            watch.limit, watch.kind = clamp.EPOCHS, "epochs"
        watch.step()


def _find(frame, shape):
    for watch in _watches.get(id(frame), ()):
        if watch.shape is shape and watch.frame is frame:
            return watch
    return None


def _start(frame, shape, limit, kind):
    current = sys.gettrace()
    if current is not None and current is not _global and not _is_line_watch(current):
        note(shape, "another trace function (a debugger or coverage) is active", 0)
        return None
    watch = Watch(frame, shape, limit, kind)
    watches = _watches.setdefault(id(frame), [])
    watches.append(watch)
    watches.sort(key=lambda w: w.shape.end - w.shape.start)
    if frame.f_trace is not None and frame.f_trace is not _local:
        _chained[id(frame)] = frame.f_trace
    frame.f_trace = _local
    if hasattr(frame, "f_trace_lines"):
        frame.f_trace_lines = True
    if not _installed[0]:
        _installed[0] = True
        _previous[0] = current if current is not _global else None
        sys.settrace(_global)
    return watch


def _is_line_watch(tracer):
    return getattr(tracer, "__module__", "") == __package__ + ".watch"


def _global(frame, event, arg):
    """Only the watched frames are traced, through their f_trace; the line watch's own
    tracer, when it was there first, goes on seeing every call."""
    previous = _previous[0]
    if previous is None:
        return None
    result = previous(frame, event, arg)
    if sys.gettrace() is not _global:  # the line watch is done and turned tracing off
        _previous[0] = None
        sys.settrace(_global)
    return result


def _local(frame, event, arg):
    try:
        chained = _chained.get(id(frame))
        if chained is not None and chained(frame, event, arg) is None:
            _chained.pop(id(frame), None)
        watches = _watches.get(id(frame))
        if not watches or watches[0].frame is not frame:
            return None
        if event == "line":
            at = frame.f_lasti
            for watch in list(watches):
                line_before = frame.f_lineno
                if watch.line(frame, at):
                    watches.remove(watch)
                if frame.f_lineno != line_before:
                    break  # it jumped: the watches left behind see the next line
        elif event == "return":
            del watches[:]
        if not watches:
            _stop(frame)
            return None
    except Exception as exc:
        core.harness_error("loop cut", exc)
        _stop(frame)
        return None
    return _local


def _stop(frame):
    _watches.pop(id(frame), None)
    try:
        frame.f_trace = _chained.pop(id(frame), None)
    except Exception:
        pass
    if not _watches and _installed[0]:
        _installed[0] = False
        if sys.gettrace() is _global:
            sys.settrace(_previous[0])
        _previous[0] = None
