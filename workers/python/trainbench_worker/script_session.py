"""What ``trainbench.step`` / ``evaluate`` / ``model`` report to, when the
studio runs a person's training script (``script_run``).

The script's own calls make the events of the worker protocol: ``hello`` and
``first_step`` at its first step, a ``window`` every ``window_steps`` steps
(closed by a device synchronisation on the loss the script passed), ``eval``
at each evaluation. The script's own loop is never changed: the session only
reads the clock, keeps the window's losses (detached) and, at a window's end,
waits for the device.

A window closes only at a step: steps after the last whole window, and a
window cut by an evaluation, are counted in the run's steps and samples but
not timed (their end on the device is not known without a synchronisation
the script did not ask for).
"""

import math
import os
import sys

from .protocol import PROTOCOL_VERSION, WorkerError, emit, monotonic_ns, since_process_start_s

_CURRENT = None


def current():
    """The session of the script this process runs, or None."""
    return _CURRENT


class Stop(BaseException):
    """Ends the script from inside ``trainbench.step`` / ``evaluate``: a step
    limit or a target reached (``reason``), or a failure (``error``). A
    ``BaseException``, so the script's own ``except Exception`` lets it pass."""

    def __init__(self, reason=None, error=None):
        super().__init__(reason or (error and error.message))
        self.reason = reason
        self.error = error


def _sync(x):
    """Waits until the device has computed ``x`` (a loss)."""
    if hasattr(x, "block_until_ready"):  # a JAX array
        x.block_until_ready()
        return
    if type(x).__module__.startswith("torch"):
        if getattr(x, "is_cuda", False):
            sys.modules["torch"].cuda.synchronize(x.device)
        return
    if hasattr(x, "numpy"):  # a TensorFlow eager tensor
        x.numpy()


def _held(x):
    """The loss as kept until its window ends: a torch tensor detached from
    its graph (which would otherwise stay alive)."""
    return x.detach() if hasattr(x, "detach") and type(x).__module__.startswith("torch") else x


def count_params(obj):
    """Parameters of a torch module, a Keras model or a JAX parameter tree."""
    if hasattr(obj, "parameters") and callable(obj.parameters):
        return int(sum(p.numel() for p in obj.parameters()))
    if hasattr(obj, "count_params") and callable(obj.count_params):
        return int(obj.count_params())
    jax = sys.modules.get("jax")
    if jax is not None:
        leaves = jax.tree_util.tree_leaves(obj)
        if leaves and all(hasattr(x, "size") for x in leaves):
            return int(sum(x.size for x in leaves))
    raise Stop(
        error=WorkerError(
            "bad_config",
            f"trainbench.model() was given a {type(obj).__name__}: expected a torch.nn.Module, "
            "a keras.Model or a JAX/Flax parameter tree",
            "model",
        )
    )


class Session:
    """One script's steps, windows and evaluations."""

    def __init__(self, plan, about):
        global _CURRENT
        self.plan = plan
        self.about = about  # (framework, framework_version, libraries, devices_visible, device)
        spec = plan["spec"]
        self.window_steps = int(spec["window_steps"])
        length = spec["length"]
        self.max_steps = int(length["steps"]) if isinstance(length, dict) and "steps" in length else None
        self.target = spec.get("target_accuracy")
        self.stop_at_target = bool(spec.get("stop_at_target"))
        self.param_count = None
        self.flops_per_sample = None
        self.steps = 0
        self.samples = 0
        self.window = []  # (samples, loss) of the open window's steps
        self.window_start = None
        self.windows = 0
        self.lr = None
        self.evals = 0
        self.start_ns = monotonic_ns()
        _CURRENT = self

    def model(self, obj):
        self.param_count = count_params(obj)

    def _hello(self, samples):
        framework, version, libraries, visible, device = self.about
        spec = self.plan["spec"]
        emit(
            "hello",
            protocol=PROTOCOL_VERSION,
            worker=f"trainbench_worker.script ({framework})",
            framework=framework,
            framework_version=version,
            libraries=libraries,
            devices_visible=visible,
            device=device,
            model=spec["model"],
            param_count=self.param_count,
            flops_per_sample=self.flops_per_sample,
            **({"flops_method": "passed by the script to trainbench.step"} if self.flops_per_sample else {}),
            precision=spec["precision"],
            precision_in_effect="as the script sets it (the studio changes nothing in its loop)",
            execution="your training script: eager, compiled or jitted as it does it itself",
            world_size=1,
            batch_size=samples,
            total_steps=self.max_steps or 0,
            threads=int(spec.get("threads") or os.environ.get("OMP_NUM_THREADS") or os.cpu_count() or 1),
            settings_env=sorted(
                [k, v] for k, v in os.environ.items() if k.startswith(tuple(self.plan.get("setting_prefixes", ())))
            ),
            data={
                "source": "the script's own",
                "path": None,
                "train_samples": 0,
                "eval_samples": 0,
                "samples_per_epoch": 0,
            },
            train_start_ns=self.start_ns,
            t_ns=monotonic_ns(),
        )

    def step(self, samples, loss, lr, flops_per_sample):
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise Stop(
                error=WorkerError(
                    "bad_config",
                    f"trainbench.step(samples={samples!r}): expected a whole number ≥ 1 (the samples this step trained on)",
                    "samples",
                )
            )
        if loss is None:
            raise Stop(
                error=WorkerError(
                    "bad_config",
                    "trainbench.step(loss=None): pass the step's loss; the studio synchronises the device on it",
                    "loss",
                )
            )
        if flops_per_sample is not None:
            self.flops_per_sample = float(flops_per_sample)
        if lr is not None:
            self.lr = float(lr)
        self.steps += 1
        self.samples += samples
        if self.steps == 1:
            _sync(loss)
            now = monotonic_ns()
            self._hello(samples)
            emit(
                "first_step",
                since_process_start_s=since_process_start_s(),
                since_train_start_s=(now - self.start_ns) / 1e9,
                compile_s=None,
                t_ns=now,
            )
            self.window_start = monotonic_ns()
        else:
            self.window.append((samples, _held(loss)))
            if len(self.window) >= self.window_steps:
                self._close_window(loss)
        if self.max_steps is not None and self.steps >= self.max_steps:
            raise Stop(reason="completed")

    def _close_window(self, last_loss):
        _sync(last_loss)
        end = monotonic_ns()
        values = [float(x) for _, x in self.window]
        mean = sum(values) / len(values)
        if not math.isfinite(mean):
            raise Stop(error=WorkerError("nan_loss", f"the training loss became {mean} by step {self.steps}"))
        emit(
            "window",
            index=self.windows,
            first_step=self.steps - len(self.window) + 1,
            steps=len(self.window),
            samples=sum(s for s, _ in self.window),
            start_ns=self.window_start,
            end_ns=end,
            loss_mean=mean,
            lr=self.lr,
        )
        self.windows += 1
        self.window = []
        self.window_start = monotonic_ns()

    def evaluate(self, accuracy, loss, samples, epoch):
        now = monotonic_ns()
        try:
            accuracy = float(accuracy)
        except (TypeError, ValueError):
            accuracy = math.nan
        if not 0.0 <= accuracy <= 1.0:
            raise Stop(
                error=WorkerError(
                    "bad_config", f"trainbench.evaluate(accuracy={accuracy!r}): expected a number in [0, 1]", "accuracy"
                )
            )
        self.evals += 1
        # The open window held the evaluation's time: its steps stay untimed.
        self.window = []
        emit(
            "eval",
            step=self.steps,
            epoch=float(epoch) if epoch is not None else float(self.evals),
            elapsed_s=(now - self.start_ns) / 1e9,
            accuracy=accuracy,
            loss=None if loss is None else float(loss),
            samples=int(samples or 0),
            t_ns=now,
        )
        self.window_start = monotonic_ns()
        if self.target is not None and self.stop_at_target and accuracy >= self.target:
            raise Stop(reason="target_reached")

    def finish(self, reason):
        """After the script: memory, then ``done``."""
        if self.steps == 0:
            raise WorkerError(
                "bad_config",
                f"{self.plan['spec']['model'][len('script:') :]} never called trainbench.step(samples=…, loss=…) "
                "(add it after each optimizer step)",
                "model",
            )
        for m in memory_events(self.about[4]["id"]):
            emit("memory", **m)
        emit("done", steps=self.steps, samples=self.samples, reason=reason, t_ns=monotonic_ns())


def memory_events(device):
    """The framework allocator's peak on a GPU (PyTorch, JAX), and the
    process's peak resident set."""
    from .protocol import peak_rss_bytes

    events = []
    torch = sys.modules.get("torch")
    if device.startswith("cuda") and torch is not None and torch.cuda.is_initialized():
        events.append(
            {
                "device": device,
                "source": "allocator",
                "peak_bytes": int(torch.cuda.max_memory_allocated()),
                "reserved_peak_bytes": int(torch.cuda.max_memory_reserved()),
            }
        )
    jax = sys.modules.get("jax")
    if device.startswith("cuda") and not events and jax is not None:
        stats = jax.devices()[0].memory_stats() or {}
        if "peak_bytes_in_use" in stats:
            events.append(
                {
                    "device": device,
                    "source": "allocator",
                    "peak_bytes": int(stats["peak_bytes_in_use"]),
                    "reserved_peak_bytes": stats.get("peak_pool_bytes"),
                }
            )
    rss = peak_rss_bytes()
    if rss:
        events.append({"device": "cpu", "source": "process_rss", "peak_bytes": rss, "reserved_peak_bytes": None})
    return events
