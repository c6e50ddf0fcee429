#!/usr/bin/env python3
"""A test double of a worker training on a GPU, for machines without one.

It speaks the worker protocol (docs/protocol.md) as a worker on cuda:0 would:
hello, first step, timed windows (really timed: each step sleeps
FAKE_STEP_S seconds), an allocator peak and done (with the loss scale under
amp-fp16). Paired with tests/fake-nvml/fake_nvml.c it lets CI drive the real
runner, store, summary and report through the GPU paths. It trains nothing;
it is never used outside tests.
"""

import json
import os
import sys
import time

spec = json.loads(sys.stdin.read() or "{}")
if len(sys.argv) > 1 and sys.argv[1] != "train":
    sys.exit(2)


def emit(event, **fields):
    print(json.dumps({"event": event, **fields}), flush=True)


device = spec.get("device", "cuda")
device = "cuda:0" if device == "cuda" else device
batch = int(spec.get("batch_size", 32))
steps = int(spec.get("steps") or 80)
precision = spec.get("precision", "fp32")
step_s = float(os.environ.get("FAKE_STEP_S", "0.03"))
window_steps = 8
flops = float(os.environ.get("FAKE_FLOPS_PER_SAMPLE", "1e10"))
now = time.monotonic_ns
start = now()
emit(
    "hello",
    protocol=1,
    worker="fake-gpu-worker (test double)",
    framework="fake",
    framework_version="0",
    libraries=[],
    devices_visible=[{"id": device, "name": "fake"}],
    device={"id": device, "name": "fake"},
    model=spec.get("model", "?"),
    param_count=1000,
    flops_per_sample=flops,
    precision=precision,
    precision_in_effect=f"{precision} (test double)",
    execution="test double",
    world_size=1,
    batch_size=batch,
    total_steps=steps,
    threads=1,
    data={
        "source": "synthetic",
        "path": None,
        "train_samples": batch * steps,
        "eval_samples": 0,
        "samples_per_epoch": batch * steps,
    },
    train_start_ns=start,
    t_ns=start,
)
time.sleep(step_s * 3)
emit("first_step", since_process_start_s=0.5, since_train_start_s=(now() - start) / 1e9, compile_s=None, t_ns=now())
step, index = 1, 0
while step < steps:
    n = min(window_steps, steps - step)
    w0 = now()
    time.sleep(step_s * n)
    emit(
        "window",
        index=index,
        first_step=step + 1,
        steps=n,
        samples=n * batch,
        start_ns=w0,
        end_ns=now(),
        loss_mean=2.0 / (1 + index),
        lr=1e-3,
    )
    step += n
    index += 1
emit("memory", device=device, source="allocator", peak_bytes=3 * 2**30, reserved_peak_bytes=4 * 2**30)
done = {"steps": step, "samples": step * batch, "reason": "completed", "t_ns": now()}
if precision == "amp-fp16":
    done["loss_scale"] = 65536.0
emit("done", **done)
