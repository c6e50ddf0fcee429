"""A plain PyTorch training loop: the baseline the libtorch worker is measured against.

The same model definitions as the PyTorch worker (workers/python, built from the
catalogue's configuration; the parameter count is checked against
`trainbench-worker-tch describe`), same synthetic data pool, AdamW, learning-rate
schedule, thread count and timing windows. It prints the worker protocol's
`first_step` and `window` events, so both runs are summarised by the same code.

    python bench/python_loop.py --model resnet_mini --batch-size 64 --steps 200 --threads 1
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

_T0 = time.monotonic_ns()

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def since_process_start_s():
    """Seconds since the kernel started this process (as the Rust worker reports)."""
    with open("/proc/self/stat") as f:
        stat = f.read()
    after = stat[stat.rfind(")") + 2 :].split()
    start_ticks = int(after[19])
    ticks = os.sysconf("SC_CLK_TCK")
    return time.clock_gettime(time.CLOCK_BOOTTIME) - start_ticks / ticks


# The models are the PyTorch worker's (workers/python), built from the core
# crate's configuration as `trainbench describe --json` prints it; only the
# training loop below is this baseline's own.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "workers", "python"))
from trainbench_worker.torch_worker import build  # noqa: E402

MODELS = ("resnet_mini", "vit_mini_patch4_32")


def model_config(name):
    out = subprocess.run(
        [os.path.join(ROOT, "target", "release", "trainbench"), "describe", "--model", name, "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)["config"]


def learning_rate(peak, step, warmup, total):
    """The studio's schedule (trainbench_core::spec::learning_rate)."""
    if warmup > 0 and step <= warmup:
        return peak * step / warmup
    progress = min((step - warmup) / max(total - warmup, 1), 1.0)
    return 0.5 * peak * (1.0 + math.cos(math.pi * progress))


def emit(event):
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=sorted(MODELS), required=True)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--window-steps", type=int, default=10)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--param-count", action="store_true", help="print the parameter count and exit")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(args.seed)
    model = build(model_config(args.model))
    params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    if args.param_count:
        print(params)
        return
    b = args.batch_size
    pool = 8 * b  # the worker's synthetic pool: min(synthetic_samples=1024, 8 × batch)
    pool = max(min(1024, pool), b)
    xs = torch.randn(pool, 3, 32, 32)
    ys = torch.randint(0, 10, (pool,))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.05)
    total = args.steps
    warmup = max(total // 20, 1)
    batches_in_pool = pool // b
    model.train()
    train_start = time.monotonic_ns()
    window_start, window_steps, window_first, window_loss, index = 0, 0, 2, 0.0, 0
    for step in range(1, total + 1):
        lr = learning_rate(args.lr, step, warmup, total)
        for g in opt.param_groups:
            g["lr"] = lr
        start = ((step - 1) % batches_in_pool) * b
        x, y = xs[start : start + b], ys[start : start + b]
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step == 1:
            now = time.monotonic_ns()
            emit(
                {
                    "event": "first_step",
                    "since_process_start_s": since_process_start_s(),
                    "since_train_start_s": (now - train_start) / 1e9,
                    "t_ns": now,
                }
            )
            window_start = time.monotonic_ns()
            continue
        window_loss = window_loss + loss.detach()
        window_steps += 1
        if window_steps == args.window_steps or step == total:
            end = time.monotonic_ns()  # CPU: every op has finished when it returns
            emit(
                {
                    "event": "window",
                    "index": index,
                    "first_step": window_first,
                    "steps": window_steps,
                    "samples": window_steps * b,
                    "start_ns": window_start,
                    "end_ns": end,
                    "loss_mean": float(window_loss) / window_steps,
                    "lr": lr,
                }
            )
            index += 1
            window_first = step + 1
            window_steps, window_loss = 0, 0.0
            window_start = time.monotonic_ns()
    emit({"event": "done", "steps": total, "samples": total * b, "reason": "completed", "t_ns": time.monotonic_ns()})


if __name__ == "__main__":
    main()
