"""What a Python worker measures after its timed windows, so that neither
perturbs throughput: the step breakdown (whole steps alternating with
split ones) and, when asked for, the operator profile under the
framework's own profiler."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .protocol import WorkerError, emit, first_line, monotonic_ns

if TYPE_CHECKING:
    from .data import Data
    from .harness import Backend, Plan


def breakdown_steps(plan: Plan, steps_trained: int) -> int:
    """The plan's breakdown rule (``BreakdownRule`` in crates/core)."""
    rule = plan.breakdown
    return min(max(steps_trained // max(rule["divisor"], 1), rule["min_steps"]), rule["max_steps"])


def measure_breakdown(plan: Plan, backend: Backend, data: Data, lr: float, steps_trained: int) -> None:
    """The step breakdown (protocol ``breakdown``), after the timed part:
    whole steps (synchronised at both ends) alternating with split steps, so
    that what splitting costs shows as the difference. Every rank runs it; rank
    0 reports."""
    n = breakdown_steps(plan, steps_trained)
    whole: list[float] = []
    series: dict[str, list[float]] = {}

    def add(phase: str, seconds: float) -> None:
        series.setdefault(phase, []).append(seconds)

    for _ in range(n):
        backend.sync()
        start = monotonic_ns()
        backend.step(data.next_batch(), lr)
        backend.sync()
        whole.append((monotonic_ns() - start) / 1e9)
        split = backend.split_step(data.next_batch, lr)
        if split is None:
            # One program: the host's batch preparation, then the rest.
            start = monotonic_ns()
            idx = data.next_batch()
            prepared = monotonic_ns()
            backend.step(idx, lr)
            backend.sync()
            end = monotonic_ns()
            split = [("data", (prepared - start) / 1e9), ("step", (end - prepared) / 1e9)]
        for phase, seconds in split:
            add(phase, seconds)
        if backend.local_backward():
            local = backend.split_step(data.next_batch, lr, local=True)
            assert local is not None  # a backend with a local backward splits its steps
            for phase, seconds in local:
                add(phase, seconds)
    if backend.rank == 0:
        emit(
            "breakdown",
            whole_step_s=whole,
            phases=[{"phase": p, "seconds": v} for p, v in series.items()],
            fused=backend.fused(),
            communication=backend.communication(),
        )


def measure_profile(plan: Plan, backend: Backend, data: Data, lr: float) -> None:
    """The operator profile (protocol ``profile``), when the plan asks for
    one: after the step breakdown, so the timed windows never run under the
    profiler. Every rank runs it (collectives); rank 0 reports."""
    rule = plan.profile
    if not rule:
        return
    steps = int(rule["steps"])
    result: dict[str, Any]
    try:
        result = backend.profile(lambda: backend.step(data.next_batch(), lr), steps)
    except WorkerError:
        raise
    except Exception as e:  # a profiler that fails must not lose the run's measurements
        result = {"not_measured": f"the profiler failed: {first_line(e)}"}
    if backend.rank == 0:
        tool = result.pop("tool", None)
        emit("profile", tool=tool or "", **result)
