"""Entry point of the Python workers.

    python -m trainbench_worker FRAMEWORK train [--plan FILE|-]   # the plan on stdin by default
    python -m trainbench_worker FRAMEWORK count                   # model configs (JSON list) on stdin → counts
    python -m trainbench_worker FRAMEWORK info                    # version and devices, one JSON object
    python -m trainbench_worker pytorch|tensorflow models [--search TEXT]   # library models: check (configs on stdin) or search
    python -m trainbench_worker pytorch capture --out FILE.pt   # a file model's TorchScript (plan on stdin), for tch

FRAMEWORK is pytorch, tensorflow or jax. ``train`` speaks the worker protocol
(docs/protocol.md) on stdout and exits 0 (done), 1 (failed), 2 (bad_config) or
3 (unsupported).
"""

import argparse
import importlib.util
import json
import os
import sys
import traceback

from . import launch, launchers, protocol, scratch
from .protocol import WorkerError, first_line

FRAMEWORKS = {
    "pytorch": ("torch", "torch_worker", "torch==2.13.0"),
    "tensorflow": ("tensorflow", "tf_worker", "tensorflow-cpu"),
    "jax": ("jax", "jax_worker", "jax[cpu] flax optax"),
}


def _import(framework):
    """The framework's module, or an `unsupported` error that says how to install it."""
    package, module, _ = FRAMEWORKS[framework]
    try:
        return __import__(f"trainbench_worker.{module}", fromlist=[module])
    except ImportError as e:
        raise WorkerError(
            "unsupported",
            f"framework = {framework}: cannot import {package} in the environment {sys.prefix} ({e}); "
            f"install it with `trainbench env install {framework}`",
            "framework",
        ) from e


def cmd_train(framework, plan_arg):
    protocol.take_stdout()
    if plan_arg == "env:TRAINBENCH_PLAN":
        text = os.environ.get("TRAINBENCH_PLAN", "")
    else:
        text = sys.stdin.read() if plan_arg in (None, "-") else open(plan_arg).read()
    # A run over several devices or nodes whose processes this one only
    # starts: they import the framework, this one does not.
    early = _early_plan(framework, text)
    if early is not None and _launches(framework, early):
        launch_run(framework, text, early)
    # The framework first: an environment without it (or without numpy) is
    # reported as not installed, with the command that installs it.
    mod = _import(framework)
    from .data import Data
    from .harness import train

    plan = early if early is not None else _plan(framework, text, mod)
    if plan is None:
        return
    rank = os.environ.get("RANK")
    if rank is None and "TRAINBENCH_COORDINATOR" in os.environ:  # a JAX or TensorFlow process of several nodes
        rank = os.environ.get("TRAINBENCH_NODE_RANK", os.environ.get("SLURM_PROCID"))
    if int(rank or "0") != 0:
        protocol.silence()
    try:
        backend = mod.Backend(plan)
        data = Data(plan)
        train(plan, backend, data)
    except WorkerError:
        raise
    except MemoryError as e:
        raise WorkerError("oom", f"out of host memory: {e}") from e
    except Exception as e:  # a framework error becomes an `internal` or `oom` event
        if mod.is_oom(e):
            raise WorkerError("oom", f"out of memory: {first_line(e)}") from e
        traceback.print_exc(file=sys.stderr)
        first = first_line(e) if str(e).strip() else ""
        raise WorkerError("internal", f"{type(e).__name__}: {first}"[:2000]) from e


def _plan(framework, text, mod):
    """The plan ``text`` holds, refused naming the field when it is not one
    for this worker; ``None`` once a person's training script has run."""
    from .harness import Plan

    try:
        obj = json.loads(text)
        if obj["spec"]["model_config"]["family"] == "script" and obj["framework"] == framework:
            # A person's training script: it runs its own loop (script_run).
            from . import script_run

            _SCRIPT_RAN[0] = True
            script_run.run(obj, framework, mod)
            return None
        plan = Plan(obj)
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise WorkerError(
            "bad_config", f"spec = (the text given) is not allowed: expected the studio's worker plan ({e})", "spec"
        ) from e
    if plan.framework != framework:
        raise WorkerError(
            "bad_config", f"framework = {plan.framework} is not allowed: this is the {framework} worker", "framework"
        )
    return plan


def _early_plan(framework, text):
    """The plan, read before the framework is imported; ``None`` when it is
    left to ``_plan`` after the import (a plan that does not parse or is
    refused, one for another framework, a person's script), so that a
    missing framework is still reported first."""
    try:
        from .harness import Plan

        obj = json.loads(text)
        if obj["framework"] != framework or obj["spec"]["model_config"]["family"] == "script":
            return None
        return Plan(obj)
    except (ImportError, ValueError, KeyError, TypeError, AttributeError, WorkerError):
        return None


def _launches(framework, plan):
    """Whether this process only launches the run's processes: several nodes
    not yet started, or several devices that the framework trains one
    process each; not when it is itself one of the run's processes."""
    if "WORLD_SIZE" in os.environ:
        return False
    several_nodes = plan.nodes > 1 and "TRAINBENCH_COORDINATOR" not in os.environ
    return several_nodes or (plan.devices > 1 and framework in launchers.DEVICES)


def launch_run(framework, text, plan):
    """Starts the run's processes in this one's place (``launch``), after
    checking that the framework is installed (without importing it)."""
    package = FRAMEWORKS[framework][0]
    if importlib.util.find_spec(package) is None:
        _import(framework)  # the `unsupported` error that says how to install it
    if plan.nodes > 1 and "TRAINBENCH_COORDINATOR" not in os.environ:
        launch.nodes(text, plan, framework)
    launch.devices(text, plan, framework, launchers.DEVICES[framework](plan))


def cmd_count(framework):
    mod = _import(framework)
    configs = json.load(sys.stdin)
    print(json.dumps([int(mod.count_params(c)) for c in configs]))


def cmd_models(framework, search, sizes=False, limit=50):
    """Library models (timm and Hugging Face in PyTorch, keras.applications in
    TensorFlow): ``--search TEXT`` lists names with their families;
    ``--limit N`` (default 50) names of each library at most;
    ``--sizes`` counts the parameters of the names on stdin (a JSON list);
    without either, the ``model_config`` objects on stdin (a JSON list) are
    checked."""
    if framework == "pytorch":
        from . import library_models as models
    elif framework == "tensorflow":
        from . import keras_models as models
    else:
        print(json.dumps([] if search is None else {}))
        return
    if sizes:
        from . import model_sizes

        print(json.dumps(model_sizes.sizes(json.load(sys.stdin))))
    elif search is not None:
        print(json.dumps(models.search(search, limit)))
    else:
        print(json.dumps(models.check(json.load(sys.stdin))))


def cmd_info(framework):
    mod = _import(framework)
    out = {"framework": framework, "python": sys.version.split()[0], "prefix": sys.prefix, **mod.info()}
    print(json.dumps(out))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="trainbench_worker")
    ap.add_argument("framework", choices=sorted(FRAMEWORKS))
    ap.add_argument("command", choices=["train", "count", "info", "models", "describe", "capture"])
    ap.add_argument("--plan", default="-")
    ap.add_argument("--search", default=None)
    ap.add_argument("--sizes", action="store_true")
    ap.add_argument("--limit", type=int, default=50)
    args, rest = ap.parse_known_args(argv)
    if rest and args.command != "capture":
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        if args.command == "train":
            cmd_train(args.framework, args.plan)
        elif args.command == "count":
            cmd_count(args.framework)
        elif args.command == "models":
            cmd_models(args.framework, args.search, args.sizes, args.limit)
        elif args.command == "describe":
            from . import describe

            describe.main()
        elif args.command == "capture":
            from . import torchscript

            torchscript.main(rest)
        else:
            cmd_info(args.framework)
    except WorkerError as e:
        if args.command == "train":
            e.emit()
        else:
            print(f"trainbench_worker: {e.message}", file=sys.stderr)
        if os.environ.get("WORLD_SIZE"):
            # A failed rank leaves at once: its peers' collectives must not hold it.
            _leave(e.exit_code)
        _leave(e.exit_code, unless_teardown_wanted=True)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    if os.environ.get("WORLD_SIZE") and args.command == "train":
        # A rank that finished leaves without the interpreter's teardown of
        # torch.distributed's threads, which can fail after `done` was said
        # and turn a finished run into a failed launcher exit.
        _leave(0)
    _leave(0, unless_teardown_wanted=True)


# Set when a person's training script ran in this process (script_run).
_SCRIPT_RAN = [False]
# file_models.MODULE_NAME: a person's model file, once imported.
_USER_MODEL_MODULE = "trainbench_user_model"


def _teardown_wanted() -> bool:
    """Whether the interpreter's teardown may still do what the run needs: a
    person's code was loaded (a training script or a model file, whose exit
    handlers are theirs to keep); this process is one of several joined by a
    coordinator (JAX's and TensorFlow's runs over several nodes shut their
    client down at exit, in step with the others); or it still has child
    processes (a data loader's, a compiler's pool: the teardown is what
    stops them, and they hold the studio's end of stdout until they stop)."""
    return (
        _SCRIPT_RAN[0] or _USER_MODEL_MODULE in sys.modules or "TRAINBENCH_COORDINATOR" in os.environ or _has_children()
    )


def _leave(code: int, unless_teardown_wanted: bool = False) -> None:
    """Everything said is flushed, then the process ends without the
    interpreter's teardown of the framework: that comes after the worker's
    last word and only keeps the studio waiting (1.4 s for TensorFlow, 1.1 s
    for PyTorch, 0.5 s for JAX on the CPU). With ``unless_teardown_wanted``
    it returns instead where the teardown may matter (``_teardown_wanted``),
    and the interpreter exits as it would have."""
    protocol.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    if unless_teardown_wanted and _teardown_wanted():
        return
    # The exit handlers are skipped: the temporary files they would remove go here.
    scratch.release()
    os._exit(code)


def _has_children() -> bool:
    """Whether any thread of this process has a live child (Linux's
    /proc/PID/task/TID/children; without it, assumed so)."""
    try:
        tasks = os.listdir("/proc/self/task")
        return any(open(f"/proc/self/task/{t}/children").read().strip() for t in tasks)
    except OSError:
        return True


if __name__ == "__main__":
    main()
