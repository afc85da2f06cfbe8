"""The sampled run: each DataLoader loop yields at most PREFLIGHT_STEPS batches. A loop whose
batches reached a backward() is a training epoch; its end is reported for the cost estimate."""

import sys
import weakref

import preflight_harness as core
from . import frames, full_size, loop_cut, measure

_last = [None]  # weakref to the iterator that yielded the latest batch


def mark_training():
    """A backward pass: the loop that yielded the latest batch is a training loop."""
    iterator = _last[0]() if _last[0] is not None else None
    if iterator is not None:
        iterator._training = True


def _cap_stop():
    """The StopIteration that ends a capped loop, marked so (report._from_cap), and held by no
    one: its traceback holds the iterator, and with it the sampler's list of every index (390 MB
    for ten million items), which a reference from the raising frame would keep until the
    cyclic garbage collector came, an epoch or more later."""
    stop = StopIteration()
    stop.preflight_cap = True
    return stop


class CappedIterator(object):
    """Wraps a DataLoader's iterator; len() and every other attribute stay the loader's."""

    def __init__(self, iterator, loader, limit):
        self._it = iterator
        self._loader = loader
        self._limit = limit
        self._count = 0
        self._stopped = False
        self._training = False
        self._ended = False

    def __iter__(self):
        return self

    def __next__(self):
        if full_size.in_child():
            full_size.end("iteration")  # the full-size iteration is over
        tracer = core.state.trace
        start = tracer.now() if tracer is not None else None
        if self._count >= self._limit:
            try:
                self._stop(sys._getframe(1))
            except Exception as exc:
                core.harness_error("DataLoader cap", exc)
            if tracer is not None:  # the wait: shutting its workers down
                core.guard("trace batch", self._traced, tracer, start, "cap")
            raise _cap_stop()
        measure.loading(1)  # a batch fetched here is the pipeline's work, not the step's parts
        try:
            batch = next(self._it)
        except StopIteration:
            if tracer is not None:
                core.guard("trace batch", self._traced, tracer, start, "exhausted")
            core.guard("DataLoader end", self._end)
            raise
        except Exception as exc:
            if tracer is not None:
                core.guard("trace batch", self._traced, tracer, start, None, type(exc).__name__)
            raise
        finally:
            measure.loading(-1)
        self._count += 1
        if tracer is not None:
            core.guard("trace batch", self._traced, tracer, start)
            core.guard("trace batch", tracer.activity, start)
        if self._count == 1 or hasattr(self._loader, "_preflight_batch"):
            checked = core.guard("full size", full_size.on_batch, batch, self._loader, self._count,
                                 sys._getframe(1))
            if checked is not None:
                batch = checked
        _last[0] = weakref.ref(self)
        core.guard("DataLoader batch", loop_cut.pulled, sys._getframe(1))
        core.guard("DataLoader batch", measure.note_batch, batch, self._loader)
        return batch

    next = __next__

    def __len__(self):
        return len(self._it)

    def __getattr__(self, name):
        if name == "_it":
            raise AttributeError(name)
        return getattr(self._it, name)

    def _traced(self, tracer, start, end=None, failed=None):
        """The wait for one batch: "next batch" in the trace, `index` counting from 1; `end` says
        why there was none."""
        at = tracer.now()
        loader = self._loader
        dataset = getattr(loader, "dataset", None)
        args = {"loader": type(dataset if dataset is not None else loader).__name__,
                "index": self._count + (end is not None or failed is not None),
                "workers": getattr(loader, "num_workers", 0)}
        if end is not None:
            args["end"] = end
        if failed is not None:
            args["error"] = failed
        tracer.complete("next batch", "data", start, at, args)
        tracer.memory(at)

    def _end(self):
        if self._training and not self._ended:
            self._ended = True
            try:
                total = len(self._it)
            except Exception:
                total = None
            core.emit("epoch_end", batches=self._count, of=total)

    def _stop(self, frame):
        self._end()
        if self._stopped:
            return
        self._stopped = True
        more = True
        try:
            more = len(self._it) > self._count
        except Exception:
            pass  # an IterableDataset without a length: assume it had more
        if not getattr(self._loader, "persistent_workers", False):
            # Workers and their prefetched batches would otherwise stay alive (and hold
            # shared memory) until the iterator is collected.
            shutdown = getattr(self._it, "_shutdown_workers", None)
            if shutdown is not None:
                shutdown()
        if more:
            where = frames.where(frame)
            key = (where["file"], where["line"]) if where else id(self._loader)
            st = core.state
            if key not in st.caps_seen:
                st.caps_seen.add(key)
                core.emit("cap", what="DataLoader", limit=self._limit, where=where)
