"""The timing every reference shares (no framework, nothing from the studio):
``warmup`` steps (compilation, first allocations) untimed, then windows of
``window`` steps, each ended by waiting for the step's result, and the
median window's samples/s, as the studio's steady throughput is the median
of its windows after warm-up."""

import argparse
import json
import statistics
import time


def arguments(batch, steps=20, warmup=4, window=4):
    """The flags every reference takes, with the family's defaults."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=batch)
    ap.add_argument("--steps", type=int, default=steps, help="timed steps after the warm-up")
    ap.add_argument("--warmup", type=int, default=warmup)
    ap.add_argument("--window", type=int, default=window, help="steps per timed window")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    return ap


def measure(step, wait, a):
    """Calls ``step()`` warm-up + timed times; ``wait(result)`` blocks until
    a step's work is done. Returns the median window's samples/s and every
    window's."""
    out = None
    for _ in range(a.warmup):
        out = step()
    wait(out)
    windows, t0 = [], time.perf_counter()
    for i in range(a.steps):
        out = step()
        if (i + 1) % a.window == 0:
            wait(out)
            t1 = time.perf_counter()
            windows.append(a.window * a.batch / (t1 - t0))
            t0 = t1
    return statistics.median(windows), windows


def report(framework, model, params, a, result, **extra):
    median, windows = result
    print(
        json.dumps(
            {
                "framework": framework,
                "model": model,
                "params": params,
                "batch": a.batch,
                "samples_per_s": median,
                "windows": [round(w, 3) for w in windows],
                **extra,
            }
        )
    )
