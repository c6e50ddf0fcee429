"""A person's own training script, run by the studio: ``script:PATH.py``.

The core crate checks the reference and sends it as ``model_config``
(``family = "script"``: ``path``, ``sha256``, ``args``). Here the file is
read once and its hash checked (other bytes are refused: what runs is what
was read), then those bytes run as ``__main__`` with ``sys.argv`` set to the
path and the run's arguments — as ``python PATH.py ARGS`` would, with the
script's folder first on ``sys.path``. The script reports its steps through
``import trainbench`` (``script_session``); nothing else in it changes.

Its output goes to stderr (the run's log); stdout carries the protocol.
A failure in the script is a failed run with the script's own traceback.
"""

import os
import sys
import types

from . import file_models, script_session
from .harness import cpu_name
from .protocol import WorkerError, first_line


def _script_error(name, e, cls="internal"):
    """The script raised ``e``: its own traceback (the studio's frames left out), bounded."""
    text = file_models.user_traceback(e)
    print(text, file=sys.stderr)
    return WorkerError(cls, f"{name} raised {type(e).__name__}: {first_line(e)[:300]}\n{text}", "model")


def _about(framework, mod, device):
    """(framework, version, libraries, devices visible, the run's device) for ``hello``."""
    info = mod.info()
    libraries = [[k, str(v)] for k, v in sorted((info.get("libraries") or {}).items()) if v is not None]
    visible = [{"id": "cpu", "name": cpu_name()}]
    visible += [{"id": f"cuda:{i}", "name": n} for i, n in enumerate(info.get("gpus") or [])]
    chosen = next((d for d in visible if d["id"] == device), {"id": device, "name": None})
    return (framework, str(info.get("version", "?")), libraries, visible, chosen)


def _run_main(path, data, args):
    """Runs the script's bytes as ``__main__``; returns normally or raises."""
    module = types.ModuleType("__main__")
    module.__file__ = path
    module.__builtins__ = __builtins__
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.argv = [path, *args]
    previous = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        exec(compile(data, path, "exec"), module.__dict__)
    finally:
        if previous is not None:
            sys.modules["__main__"] = previous


def run(obj, framework, mod):
    """Runs the plan's script to its end, a step limit or a target; emits ``done``."""
    spec = obj["spec"]
    c = spec["model_config"]
    ref = spec["model"]
    path, data = file_models._read(c, ref)
    name = os.path.basename(path)
    threads = spec.get("threads")
    if threads and framework == "pytorch":
        sys.modules["torch"].set_num_threads(int(threads))
    os.environ["TRAINBENCH_SCRIPT"] = path
    session = script_session.Session(obj, _about(framework, mod, spec["device"]))
    sys.modules.pop("trainbench", None)  # imported afresh by the script, bound to this session
    reason = "completed"
    try:
        _run_main(path, data, list(c.get("args") or []))
    except script_session.Stop as stop:
        if stop.error is not None:
            raise stop.error from None
        reason = stop.reason
    except SystemExit as e:
        if e.code not in (None, 0):
            raise WorkerError("internal", f"{name} exited with status {e.code}", "model") from None
    except KeyboardInterrupt:
        raise
    except MemoryError as e:
        raise WorkerError("oom", f"{name}: out of host memory: {e}") from None
    except Exception as e:
        if mod.is_oom(e):
            raise WorkerError("oom", f"{name}: out of memory: {first_line(e)}") from None
        raise _script_error(name, e) from None
    session.finish(reason)
