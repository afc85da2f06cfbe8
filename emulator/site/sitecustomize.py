# Preflight's entry point inside the job (docs/harness.md): installs the harness when
# PREFLIGHT_EVENTS is set, then runs the image's own sitecustomize as if it had been imported.
# Kept tiny: this file is compiled on every interpreter start (its folder is read-only).


def _preflight_install():
    import os
    if os.environ.get("PREFLIGHT_EVENTS"):
        try:
            import preflight_harness
            preflight_harness.install()
        except Exception:
            pass


def _preflight_chain():
    # The next sitecustomize on sys.path after this folder, run the way site.py runs one.
    import os
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    seen = False
    path = None
    for entry in list(sys.path):
        try:
            folder = os.path.abspath(entry or os.curdir)
        except Exception:
            continue
        if not seen:
            seen = folder == here
            continue
        candidate = os.path.join(folder, "sitecustomize.py")
        if os.path.isfile(candidate):
            path = candidate
            break
    if path is None:
        return
    try:
        import _frozen_importlib as bootstrap
        import _frozen_importlib_external as external
        loader = external.SourceFileLoader("sitecustomize", path)
        spec = external.spec_from_file_location("sitecustomize", path, loader=loader)
        module = bootstrap.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        loader.exec_module(module)
    except ImportError as exc:
        if exc.name != "sitecustomize":
            _preflight_report(exc)
    except Exception as exc:
        _preflight_report(exc)
    harness = sys.modules.get("preflight_harness")
    if harness is not None:
        harness.after_site_hooks()


def _preflight_report(err):
    import sys
    if sys.flags.verbose:
        sys.excepthook(*sys.exc_info())
    else:
        sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                         "%s: %s\n" % (err.__class__.__name__, err))


_preflight_install()
_preflight_chain()
