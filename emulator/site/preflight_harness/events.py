"""Writing events: one JSON line per write() with O_APPEND, so concurrent processes
(DataLoader workers, subprocesses) never interleave."""

import json
import os
import time

import preflight_harness as core

_MAX_HARNESS_ERRORS = 20


def line(ev, t0, fields):
    head = {"ev": ev, "t": round(time.monotonic() - t0, 6), "pid": os.getpid()}
    head.update(fields)
    # ensure_ascii=False then "replace": a lone surrogate (an undecodable file name) becomes
    # "?" instead of an escape that strict JSON readers reject.
    text = json.dumps(head, ensure_ascii=False, separators=(",", ":"), default=str)
    return (text + "\n").encode("utf-8", "replace")


def emit(ev, **fields):
    st = core.state
    if st is None:
        return
    core.append(st.events, line(ev, st.t0, fields))


def harness_error(where, exc):
    """The harness's own failures: reported (a few), never raised into the job."""
    st = core.state
    if st is None or st.errors >= _MAX_HARNESS_ERRORS:
        return
    st.errors += 1
    try:
        emit("harness_error", where=where, type=type(exc).__name__, message=str(exc)[:500])
    except Exception:
        pass
