"""What every Python worker shares: the plan, the learning-rate schedule and
the timed training loop (the data and the batch order are in data.py).

A framework module supplies a *backend* (model, optimizer step, synchronisation,
evaluation, memory peaks); the loop here decides when windows open and close,
when to evaluate and what to report, so that PyTorch, TensorFlow and JAX are
timed by the same code. The plan comes from the studio's core crate
(``RunSpec::worker_plan_json``): the catalogue, defaults and validation are not
repeated here.
"""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Callable
from time import thread_time_ns
from typing import TYPE_CHECKING, Any

import numpy as np

from .after import measure_breakdown, measure_profile
from .plan_schema import BreakdownRule, Length, ModelConfig, ProfileRule, Spec, check_plan
from .protocol import (
    PROTOCOL_VERSION,
    WorkerError,
    bad_config,
    emit,
    monotonic_ns,
    peak_rss_bytes,
    since_process_start_s,
    unsupported,
)
from .traits import Traits, of_plan

if TYPE_CHECKING:
    from .data import Batch, Data

EVAL_BATCH = 512
ADAMW_BETAS = (0.9, 0.999)
ADAMW_EPS = 1e-8


class Plan:
    """The validated, resolved run spec (see ``WorkerPlan`` in crates/core)."""

    def __init__(self, obj: dict[str, Any]) -> None:
        if obj.get("protocol") != PROTOCOL_VERSION:
            raise bad_config(
                f"protocol = {obj.get('protocol')} is not allowed: expected {PROTOCOL_VERSION}", "protocol"
            )
        # Every field as the core crate's WorkerPlan defines it (its schema).
        check_plan(obj)
        self.framework: str = obj["framework"]
        # None for a library model: the backend counts them on the model it
        # builds (and says how the FLOPs were counted).
        self.param_count = None if obj["param_count"] is None else int(obj["param_count"])
        self.flops_per_sample = None if obj["flops_per_sample"] is None else float(obj["flops_per_sample"])
        self.flops_method: str | None = None
        s = obj["spec"]
        self.spec: Spec = s
        self.model: str = s["model"]
        self.config: ModelConfig = s["model_config"]
        self.family: str = self.config["family"]
        self._traits = of_plan(obj["traits"])
        self.precision: str = s["precision"]
        self.compile: str = s["compile"]
        self.device: str = s["device"]
        self.devices = int(s["devices"])
        # Machines, each with `devices` devices (several: torchrun under Slurm).
        self.nodes = int(s.get("nodes", 1))
        self.parallel: str = s.get("parallel", "ddp")
        self.batch_size = int(s["batch_size"])
        self.length: Length = s["length"]
        self.data: str = s["data"]
        self.data_path: str | None = s.get("data_path")
        self.loader_workers: int | None = s.get("loader_workers")
        self.seed = int(s["seed"])
        self.lr = float(s["lr"])
        self.weight_decay = float(s["weight_decay"])
        # The warm-up as the core crate resolved it (``PlanWarmup``): a step
        # count, or, for a run in epochs whose total only the worker knows, the
        # core crate's default rule to apply to that total.
        w = obj["warmup"]
        self.warmup_steps: int | None
        self.warmup_rule: tuple[int, int] | None
        if "steps" in w:
            self.warmup_steps, self.warmup_rule = int(w["steps"]), None
        else:
            rule = w["of_total"]
            self.warmup_steps, self.warmup_rule = None, (int(rule["divisor"]), int(rule["min_steps"]))
        self.window_steps = int(s["window_steps"])
        self.eval_every_steps: int | None = s.get("eval_every_steps")
        self.target_accuracy: float | None = s.get("target_accuracy")
        self.target_loss: float | None = s.get("target_loss")
        self.stop_at_target = bool(s["stop_at_target"])
        self.threads_given: int | None = s.get("threads")
        self.setting_prefixes: tuple[str, ...] = tuple(obj.get("setting_prefixes", ()))
        self.synthetic_samples = int(s["synthetic_samples"])
        self.breakdown: BreakdownRule = obj.get("breakdown") or BreakdownRule(divisor=10, min_steps=3, max_steps=10)
        # ``ProfileRule`` in crates/core, present only when the run asked for a profile.
        self.profile: ProfileRule | None = obj.get("profile")

    @property
    def traits(self) -> Traits:
        """The model's traits: the plan's, or those its builder set (a
        library or file model; see ``trainbench_worker.traits``)."""
        if self._traits is None:
            raise RuntimeError(f"model = {self.model}: its traits are read before its builder set them")
        return self._traits

    def set_traits(self, found: Traits) -> None:
        """A library or file model's traits, set once by its builder."""
        if self._traits is not None and self._traits != found:
            raise RuntimeError(f"model = {self.model}: its traits are set twice ({self._traits} and {found})")
        self._traits = found

    @property
    def global_batch(self) -> int:
        return self.batch_size * self.devices * self.nodes

    @property
    def is_cuda(self) -> bool:
        return self.device.startswith("cuda")

    def warmup(self, total: int) -> int:
        """Warm-up steps for a run of ``total`` steps, from the plan."""
        if self.warmup_steps is not None:
            return self.warmup_steps
        assert self.warmup_rule is not None  # set whenever warmup_steps is None
        divisor, min_steps = self.warmup_rule
        return max(total // max(divisor, 1), min_steps)

    @property
    def cuda_index(self) -> int:
        return int(self.device.split(":")[1]) if ":" in self.device else 0

    def threads(self) -> int:
        """Intra-op threads per process: the spec's, else OMP_NUM_THREADS, else the
        cores shared out among the processes of the run."""
        if self.threads_given:
            return int(self.threads_given)
        env = os.environ.get("OMP_NUM_THREADS")
        if env and env.isdigit() and int(env) >= 1:
            return int(env)
        return max(1, (os.cpu_count() or 1) // max(1, self.devices))


def check_precision(
    precision: str, is_cuda: bool, capability_major: int | None = None, bf16_supported: bool | None = None
) -> None:
    """Refuses, as ``unsupported`` on the field ``precision``, a precision this
    device cannot run. Every backend asks here, with what its framework reports;
    the backend keeps only how it reads the device and switches the precision on.

    ``capability_major``: the major compute capability of the run's GPU (read
    only for ``tf32``, and for ``amp-bf16`` without ``bf16_supported``).
    ``bf16_supported``: the framework's own verdict on bfloat16 where it gives
    one (PyTorch's ``torch.cuda.is_bf16_supported()``); None decides by the
    capability: bfloat16 from Ampere (8.x) on.
    """
    if precision in ("tf32", "amp-fp16") and not is_cuda:
        raise unsupported(f"precision = {precision} needs an NVIDIA GPU; on the CPU use fp32 or amp-bf16", "precision")
    if not is_cuda:
        return
    # Every backend reads the capability of a GPU run (None only on the CPU).
    assert capability_major is not None
    if precision == "tf32" and capability_major < 8:
        raise unsupported(
            f"precision = tf32 needs an Ampere or newer GPU (compute capability {capability_major}.x here)", "precision"
        )
    if precision == "amp-bf16":
        supported = capability_major >= 8 if bf16_supported is None else bf16_supported
        if not supported:
            raise unsupported("precision = amp-bf16: this GPU has no bfloat16 support", "precision")


def learning_rate(peak: float, step: int, warmup: int, total: int) -> float:
    """The studio's schedule (trainbench_core::spec::learning_rate): linear
    warm-up to ``peak``, then cosine decay to 0 at the last step."""
    if warmup > 0 and step <= warmup:
        return peak * step / warmup
    progress = min((step - warmup) / max(total - warmup, 1), 1.0)
    return 0.5 * peak * (1.0 + math.cos(math.pi * progress))


# The text corpus (data = text): held-out sequences evaluated, at most
# EVAL_TOKENS tokens of them, in batches of at most EVAL_BATCH_TOKENS tokens
# (a decoder's logits are tokens × vocabulary).
EVAL_TOKENS = 16384
EVAL_BATCH_TOKENS = 2048
TEXT_TRAIN_FRACTION = 0.9


def inputs_and_targets(plan: Plan, x: Any, y: Any) -> tuple[Any, Any]:
    """The model's inputs and targets from a batch (any framework's arrays):
    a decoder's sequences of ``seq_len + 1`` tokens give their first
    ``seq_len`` as inputs and, one on, the next tokens as targets (causal LM:
    each position predicts the next token); other models take ``x``, ``y``."""
    if plan.traits.next_token:
        return x[:, :-1], x[:, 1:]
    return x, y


def predictions_per_sample(plan: Plan) -> int:
    """Targets one sample is scored on: a decoder's every next token, else one."""
    return plan.config["seq_len"] if plan.traits.next_token else 1


def eval_batch(plan: Plan) -> int:
    """Sequences (or images) per evaluation batch."""
    if plan.traits.next_token:
        seq_len: int = plan.config["seq_len"]
        return max(EVAL_BATCH_TOKENS // seq_len, 1)
    return EVAL_BATCH


def cpu_name() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def total_steps(plan: Plan, data: Data) -> int:
    length = plan.length
    assert isinstance(length, dict)  # a training script's run ("script_decides") has no timed loop
    if "steps" in length:
        return int(length["steps"])
    return int(length["epochs"]) * data.steps_per_epoch


class Backend:
    """What a framework supplies to :func:`train`. See the framework modules."""

    worker = "?"
    framework = "?"
    framework_version = "?"
    rank = 0
    world_size = 1
    plan: Plan

    def libraries(self) -> list[tuple[str, str]]:
        return []

    def devices_visible(self) -> list[dict[str, Any]]:
        return [{"id": "cpu", "name": cpu_name()}]

    def device_info(self) -> dict[str, Any]:
        return {"id": "cpu", "name": cpu_name()}

    def param_count(self) -> int:
        raise NotImplementedError

    def precision_in_effect(self) -> str:
        raise NotImplementedError

    def execution(self) -> str:
        raise NotImplementedError

    def set_data(self, data: Data) -> None:
        """Moves the arrays to the device once; batches are cut from them by index."""
        raise NotImplementedError

    def step(self, idx: Batch, lr: float) -> Any:
        """One optimizer step on global batch ``idx``; returns a loss handle that
        may still be in flight (read only after :meth:`sync`)."""
        raise NotImplementedError

    def sync(self) -> None:
        """Blocks until the device has finished every step issued so far."""

    def loss_values(self, handles: list[Any]) -> list[float]:
        return [float(h) for h in handles]

    def evaluate(self) -> tuple[float, float, int]:
        """(accuracy, mean loss, samples) on the held-out split."""
        raise NotImplementedError

    def compile_s(self) -> float | None:
        """Compilation time measured on its own, or None."""
        return None

    def loss_scale(self) -> float | None:
        """The dynamic loss scale now, where loss scaling runs (amp-fp16); else None."""
        return None

    def memory_events(self) -> list[dict[str, Any]]:
        """Peak-memory events; by default the worker's peak resident set."""
        rss = peak_rss_bytes()
        if rss is None:
            return []
        return [{"device": "cpu", "source": "process_rss", "peak_bytes": rss, "reserved_peak_bytes": None}]

    def finish(self) -> None:
        """Called on every rank after the last step (collectives, clean-up)."""

    # --- the step breakdown and recompilation -------------------------

    def split_step(
        self, next_batch: Callable[[], Batch], lr: float, local: bool = False
    ) -> list[tuple[str, float]] | None:
        """One training step timed phase by phase, each phase closed by
        :meth:`sync`: ``[(phase, seconds), ...]`` with phases from ``data``,
        ``forward``, ``backward``, ``optimizer`` (protocol ``Phase``). With
        ``local``, the step's backward runs without the gradient all-reduce and
        only ``[("backward_local", seconds)]`` is returned (no update is
        applied). None where the framework runs the step as one program
        (:meth:`fused`)."""
        return None

    def fused(self) -> str | None:
        """What the framework runs as one program, in words (the breakdown's
        ``step`` part), where :meth:`split_step` is None."""
        return None

    def local_backward(self) -> bool:
        """Whether :meth:`split_step` can time a backward without the gradient
        all-reduce (DDP's ``no_sync``), so communication can be separated."""
        return False

    def communication(self) -> str | None:
        """How a data-parallel run's communication shows in the breakdown, in
        words; None for one device."""
        return None

    def compile_count(self) -> int | None:
        """Compilations of the training step so far as the framework counts
        them, or None where nothing is compiled or counted."""
        return None

    def compile_source(self) -> str:
        """What :meth:`compile_count` counts, in words."""
        return ""

    def max_over_ranks(self, n: int) -> int:
        """The largest of ``n`` over the data-parallel processes (a
        collective where there are several: every rank calls it)."""
        return n

    # --- the operator profile ----------------------------------------

    def profile(self, run_step: Callable[[], object], steps: int) -> dict[str, Any]:
        """``steps`` calls of ``run_step`` under the framework's profiler,
        reduced (``profiling.reduce``) to the protocol's ``profile`` event
        fields; or ``{"not_measured": why}``."""
        return {"not_measured": f"{self.plan.framework}: no operator profiler is wired up for this framework"}


def reshape_at_step() -> int | None:
    """``TRAINBENCH_RESHAPE_AT_STEP=N``: step N trains on a batch one sample
    short, a real change of input shape that makes a compiling framework
    compile again (how the tests construct a recompiling run)."""
    return env_count("TRAINBENCH_RESHAPE_AT_STEP")


def data_busy_s() -> float:
    """``TRAINBENCH_DATA_BUSY_MS=M``: M ms of host CPU work added to each
    batch's preparation (how the tests construct an input-bound run)."""
    ms = env_count("TRAINBENCH_DATA_BUSY_MS")
    return 0.0 if ms is None else ms / 1e3


def env_count(name: str) -> int | None:
    """A whole number ≥ 0 from the environment variable ``name``; None when
    it is unset or empty, a bad_config error naming it otherwise."""
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    if not value.isdigit():
        raise WorkerError(
            "bad_config", f"{name} = {value!r} is not allowed: expected a whole number ≥ 0, or unset", field=name
        )
    return int(value)


def busy(seconds: float) -> int:
    """Spins until this thread has spent ``seconds`` of CPU time: host work
    that a busy machine slows as it slows the training step (a wall-clock
    spin would stay 200 ms while the step beside it grew)."""
    end = thread_time_ns() + int(seconds * 1e9)
    x = 0
    while thread_time_ns() < end:
        x += 1
    return x


def nan_loss(step: int, value: float) -> WorkerError:
    return WorkerError(
        "nan_loss", f"the training loss became {value} at step {step}; lower lr or use another precision"
    )


def settings_env(plan: Plan) -> list[list[str]]:
    """The environment variables of the frameworks' own families in this
    process (the run's, or inherited): [[name, value], ...] by name."""
    if not plan.setting_prefixes:
        return []
    return sorted([k, v] for k, v in os.environ.items() if k.startswith(plan.setting_prefixes))


def say_hello(plan: Plan, backend: Backend, data: Data, steps: int, count: int) -> int:
    """The `hello` event: what trains, where and how; returns the training's start."""
    train_start = monotonic_ns()
    emit(
        "hello",
        protocol=PROTOCOL_VERSION,
        worker=backend.worker,
        framework=backend.framework,
        framework_version=backend.framework_version,
        libraries=backend.libraries(),
        devices_visible=backend.devices_visible(),
        device=backend.device_info(),
        model=plan.model,
        param_count=count,
        flops_per_sample=plan.flops_per_sample,
        **({} if plan.flops_method is None else {"flops_method": plan.flops_method}),
        precision=plan.precision,
        precision_in_effect=backend.precision_in_effect(),
        execution=backend.execution(),
        world_size=backend.world_size,
        batch_size=plan.batch_size,
        total_steps=steps,
        threads=plan.threads(),
        settings_env=settings_env(plan),
        data=data.info(),
        **library_tokens(plan),
        train_start_ns=train_start,
        t_ns=train_start,
    )
    return train_start


def library_tokens(plan: Plan) -> dict[str, int]:
    """A library decoder's tokens per sample (its sequence length), which
    only its builder knew it to be; the spec says it for the others."""
    if plan.config.get("family") == "library" and plan.traits.next_token:
        return {"tokens_per_sample": int(plan.config["seq_len"])}
    return {}


def finish(plan: Plan, backend: Backend, data: Data, lr: float, step: int, recompiles: int | None, reason: str) -> None:
    """After the timed loop: memory, the breakdown and profile, then `done`."""
    gb = plan.global_batch
    # Peak memory and the loss scale as training left them: read before the
    # breakdown's and the profile's extra steps (the profiler's buffers would
    # raise the process's peak; extra GradScaler updates move the scale).
    memory = backend.memory_events()
    loss_scale = backend.loss_scale()
    if recompiles is not None:
        # Any rank that compiled again slowed every rank's step.
        recompiles = backend.max_over_ranks(recompiles)
    if step > 1:
        measure_breakdown(plan, backend, data, lr, step)
        measure_profile(plan, backend, data, lr)
    data.close()
    backend.finish()
    for m in memory:
        emit("memory", **m)
    extra: dict[str, Any] = {} if loss_scale is None else {"loss_scale": float(loss_scale)}
    if recompiles is not None:
        extra["compiles"] = {"after_first_step": recompiles, "source": backend.compile_source()}
    emit("done", steps=step, samples=step * gb, reason=reason, t_ns=monotonic_ns(), **extra)


def train(plan: Plan, backend: Backend, data: Data) -> None:
    """The timed loop shared by every Python worker."""
    steps = total_steps(plan, data)
    warmup = plan.warmup(steps)
    backend.set_data(data)
    count = backend.param_count()
    if plan.param_count is not None and count != plan.param_count:
        raise WorkerError(
            "internal",
            f"model {plan.model} has {count} trainable parameters in {backend.framework} but the catalogue says {plan.param_count}: the two definitions disagree",
        )
    train_start = say_hello(plan, backend, data, steps, count)
    has_eval = data.eval is not None

    def eval_due(step: int) -> bool:
        if not has_eval:
            return False
        if step == steps:
            return True
        every = plan.eval_every_steps or data.steps_per_epoch
        return step % every == 0

    gb = plan.global_batch
    window_start, window_first, index = 0, 2, 0
    handles: list[Any] = []
    reason, step, lr = "completed", 0, plan.lr
    reshape = reshape_at_step()
    recompiles = 0 if backend.compile_count() is not None else None
    while step < steps:
        step += 1
        lr = learning_rate(plan.lr, step, warmup, steps)
        idx = data.next_batch()
        if step == reshape and isinstance(idx, np.ndarray):
            idx = idx[:-1]
        if recompiles is not None and step > 1:
            before = backend.compile_count()
            loss = backend.step(idx, lr)
            after = backend.compile_count()
            assert before is not None and after is not None  # counted: recompiles is not None
            recompiles += after - before
        else:
            loss = backend.step(idx, lr)
        restart = False
        if step == 1:
            backend.sync()
            now = monotonic_ns()
            first = backend.loss_values([loss])[0]
            if not math.isfinite(first):
                raise nan_loss(step, first)
            emit(
                "first_step",
                since_process_start_s=since_process_start_s(),
                since_train_start_s=(now - train_start) / 1e9,
                compile_s=backend.compile_s(),
                t_ns=now,
            )
            restart = True
        else:
            handles.append(loss)
        evaluate = eval_due(step)
        if handles and (len(handles) == plan.window_steps or evaluate or step == steps):
            backend.sync()
            end = monotonic_ns()
            values = backend.loss_values(handles)
            mean = sum(values) / len(values)
            if not math.isfinite(mean):
                raise nan_loss(step, mean)
            emit(
                "window",
                index=index,
                first_step=window_first,
                steps=len(handles),
                samples=len(handles) * gb,
                start_ns=window_start,
                end_ns=end,
                loss_mean=mean,
                lr=lr,
            )
            index += 1
            window_first = step + 1
            handles = []
            restart = True
        if evaluate:
            accuracy, eval_loss, samples = backend.evaluate()
            if not math.isfinite(eval_loss):
                raise nan_loss(step, eval_loss)
            now = monotonic_ns()
            emit(
                "eval",
                step=step,
                epoch=step / data.steps_per_epoch,
                elapsed_s=(now - train_start) / 1e9,
                accuracy=accuracy,
                loss=eval_loss,
                samples=samples,
                t_ns=now,
            )
            restart = True
            if plan.stop_at_target and (
                (plan.target_accuracy is not None and accuracy >= plan.target_accuracy)
                or (plan.target_loss is not None and eval_loss <= plan.target_loss)
            ):
                reason = "target_reached"
                break
        if restart:
            window_start = monotonic_ns()
    finish(plan, backend, data, lr, step, recompiles, reason)
