"""The worker protocol, version 1, as the Python workers speak it.

The schema lives in ``crates/core/src/protocol.rs``; ``docs/protocol.md`` describes
it. One JSON object per line on stdout; anything else (stderr, framework chatter)
is log text. Times named ``*_ns`` are CLOCK_MONOTONIC nanoseconds, the clock the
runner stamps telemetry with.
"""

import json
import os
import sys
import time
from typing import Any, Literal, TextIO

PROTOCOL_VERSION = 1

# Exit codes the runner and the CLI rely on.
EXIT_FAILED = 1
EXIT_BAD_CONFIG = 2
EXIT_UNSUPPORTED = 3

# The error classes of the protocol's ``error`` event.
ErrorClass = Literal["oom", "unsupported", "bad_config", "nan_loss", "internal"]
_CLASSES = ("oom", "unsupported", "bad_config", "nan_loss", "internal")

# Only rank 0 of a multi-process run speaks; the others stay quiet.
_SILENT = False
# The real stdout: frameworks print to sys.stdout, which is redirected to stderr
# so that only protocol lines reach the runner's event reader.
_OUT: TextIO = sys.stdout


def take_stdout() -> None:
    """Keeps the real stdout for events and sends everything else printed to stderr."""
    global _OUT
    _OUT = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def give_back_stdout() -> None:
    """Puts the real stdout back on fd 1 (before exec'ing a launcher whose ranks speak)."""
    _OUT.flush()
    os.dup2(_OUT.fileno(), 1)


def flush() -> None:
    _OUT.flush()


def silence() -> None:
    global _SILENT
    _SILENT = True


def monotonic_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def process_start_ns() -> int | None:
    """When this process started, on the monotonic clock (10 ms resolution)."""
    try:
        with open("/proc/self/stat") as f:
            stat = f.read()
        fields = stat[stat.rfind(")") + 2 :].split()
        start_ticks = int(fields[19])
        age_s = time.clock_gettime(time.CLOCK_BOOTTIME) - start_ticks / os.sysconf("SC_CLK_TCK")
        return monotonic_ns() - int(age_s * 1e9)
    except (OSError, ValueError, IndexError):
        return None


# A launcher (torchrun for several processes) passes its own start, so that the
# time to first step covers the whole launch, not only the rank's process.
LAUNCH_ENV = "TRAINBENCH_PROCESS_START_NS"


def node_rank_env(i: int) -> dict[str, str]:
    """The variables that give node ``i`` of a run fanned out over SSH or
    Ray its rank: the studio's own, and torchrun's ``PET_NODE_RANK`` (its
    ``--node-rank``), by which a static rendezvous puts global rank 0 on
    node 0, the node whose output is the run's."""
    return {"TRAINBENCH_NODE_RANK": str(i), "PET_NODE_RANK": str(i)}


def since_process_start_s() -> float | None:
    """Seconds from the start of the worker (its launcher's, if it had one) to now."""
    given = os.environ.get(LAUNCH_ENV)
    start = int(given) if given and given.isdigit() else process_start_ns()
    if start is None:
        return None
    return (monotonic_ns() - start) / 1e9


def peak_rss_bytes() -> int | None:
    """This process's peak resident set (VmHWM), or None."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def emit(event: str, **fields: Any) -> None:
    """One event line: ``fields`` are the event's JSON values (any shape the
    protocol gives that event)."""
    if _SILENT and event != "error":
        return
    fields = {"event": event, **fields}
    _OUT.write(json.dumps(fields, allow_nan=False) + "\n")
    _OUT.flush()


def first_line(e: BaseException) -> str:
    """The first line of an exception's message, or its type's name."""
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


class WorkerError(Exception):
    """A failure that ends the run with an ``error`` event of ``cls``."""

    def __init__(self, cls: ErrorClass, message: str, field: str | None = None) -> None:
        assert cls in _CLASSES, cls
        super().__init__(message)
        self.cls = cls
        self.field = field
        self.message = message

    @property
    def exit_code(self) -> int:
        return {"bad_config": EXIT_BAD_CONFIG, "unsupported": EXIT_UNSUPPORTED}.get(self.cls, EXIT_FAILED)

    def emit(self) -> None:
        emit("error", **{"class": self.cls}, field=self.field, message=self.message, t_ns=monotonic_ns())


def unsupported(message: str, field: str | None = None) -> WorkerError:
    return WorkerError("unsupported", message, field)


def bad_config(message: str, field: str) -> WorkerError:
    return WorkerError("bad_config", message, field)
