"""What to patch when a watched module finishes importing."""

import sys

import preflight_harness as core


def loaded(name, module):
    if name == "torch":
        from . import torch_hooks
        torch_hooks.install(module)
    elif name == "threading":
        _patch_threading(module)
    elif name == "torch.distributed.run":
        from . import ranks
        ranks.patch_launcher(module)
    else:
        from . import clamp
        clamp.loaded(name, module)


def _patch_threading(threading):
    watch = sys.modules.get("preflight_harness.watch")
    if watch is not None:
        watch.on_threading(threading)
    st = core.state
    if st.threading_patched or not hasattr(threading, "excepthook"):
        return  # threading.excepthook is Python 3.8+
    st.threading_patched = True
    original = threading.excepthook

    def excepthook(args):
        try:
            if args.exc_type is not SystemExit:
                from . import report
                report.uncaught(args.exc_value, args.exc_traceback, "thread")
        except Exception as exc:
            core.harness_error("threading.excepthook", exc)
        return original(args)

    threading.excepthook = excepthook
