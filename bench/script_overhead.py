"""What `trainbench.step` costs a training loop.

The same PyTorch loop (a small MLP, AdamW, CPU, one thread), its step sized
to about 10 ms, runs in blocks of --steps steps, alternately:

- plain: the loop without the calls;
- alone: with `trainbench.step(samples=…, loss=loss)` after each step, not
  run by the studio (the calls return at once);
- measured: with the calls reporting to a live session (as under
  `trainbench run --script`), a window every 10 steps closed by a
  synchronisation on the loss; the events go to /dev/null.

Each block's seconds per step; per mode the median over blocks, and each
mode's overhead against the plain blocks next to it (median of the paired
ratios). Blocks interleave (plain, alone, measured, …), so drift in the
machine hits every mode alike.

    python bench/script_overhead.py [--blocks 9] [--steps 100] [--width 768]
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "workers", "python"))

import torch  # noqa: E402
import trainbench  # noqa: E402
from torch import nn  # noqa: E402
from trainbench_worker import protocol, script_session  # noqa: E402


def build(width):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(64, width), torch.randint(0, 10, (64,))
    return model, opt, x, y


def block(model, opt, x, y, steps, report):
    start = time.perf_counter()
    for _ in range(steps):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if report:
            trainbench.step(samples=64, loss=loss)
    return (time.perf_counter() - start) / steps


def call_cost(live, x, n=20000):
    """Microseconds one `trainbench.step` costs, alone and measured (a loss
    tensor made once; a window of 10 closed every 10 calls), timed over `n`
    calls without the loop around them: the figure the machine's noise does
    not blur."""
    loss = (x * 2).sum().requires_grad_()
    out = {}
    for mode, s in (("alone", None), ("measured", live)):
        trainbench._session = s
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(n):
                trainbench.step(samples=64, loss=loss)
            best = min(best, (time.perf_counter() - start) / n * 1e6)
        out[mode] = best
    trainbench._session = None
    return out


def session():
    """A live session as the studio's worker makes one; events to /dev/null."""
    protocol._OUT = open(os.devnull, "w")
    plan = {
        "spec": {
            "model": "script:/bench/loop.py",
            "window_steps": 10,
            "length": "script_decides",
            "precision": "fp32",
            "device": "cpu",
            "threads": 1,
        },
        "setting_prefixes": [],
    }
    about = ("pytorch", torch.__version__, [], [{"id": "cpu", "name": None}], {"id": "cpu", "name": None})
    return script_session.Session(plan, about)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=9)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--width", type=int, default=512)
    args = ap.parse_args()
    torch.set_num_threads(1)
    model, opt, x, y = build(args.width)
    live = session()
    block(model, opt, x, y, 20, False)  # warm-up
    times = {"plain": [], "alone": [], "measured": []}
    for _ in range(args.blocks):
        for mode in times:
            trainbench._session = live if mode == "measured" else None
            times[mode].append(block(model, opt, x, y, args.steps, mode != "plain"))
    trainbench._session = None
    calls = call_cost(live, x)
    print(f"torch {torch.__version__}, 1 thread, {args.blocks} blocks of {args.steps} steps each, interleaved")
    for mode, t in times.items():
        ratios = [a / b for a, b in zip(t, times["plain"])]
        print(
            f"{mode:9s} {statistics.median(t) * 1e3:7.3f} ms/step (min {min(t) * 1e3:.3f}, max {max(t) * 1e3:.3f}); "
            f"vs plain: median paired ratio {statistics.median(ratios):.4f}"
        )
    for mode, us in calls.items():
        print(f"the calls alone, {mode}: {us:.2f} µs per step ({us / 1e4 * 100:.3f} % of a 10 ms step)")


if __name__ == "__main__":
    main()
