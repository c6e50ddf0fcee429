"""Shared pieces of the Python workers' unit tests (`workers/python`): a plan as the core crate writes
it (``WorkerPlan``), for a small model, with any spec field replaced."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "workers", "python"))

from trainbench_worker.protocol import PROTOCOL_VERSION  # noqa: E402 (after the path it is found on)


def plan_dict(**spec):
    """A resolved plan of a small CNN on MNIST-shaped images; ``spec`` fields
    replace the defaults (``warmup`` replaces the plan's warm-up)."""
    warmup = spec.pop("warmup", {"steps": 2})
    s = {
        "model": "resnet_mini",
        "model_config": {"family": "resnet", "in_channels": 1, "image_size": 28, "num_classes": 10},
        "precision": "fp32",
        "compile": "off",
        "device": "cpu",
        "devices": 1,
        "batch_size": 8,
        "length": {"steps": 20},
        "data": "synthetic",
        "seed": 7,
        "lr": 0.001,
        "weight_decay": 0.01,
        "window_steps": 5,
        "stop_at_target": False,
        "synthetic_samples": 64,
    }
    s.update(spec)
    return {
        "protocol": PROTOCOL_VERSION,
        "framework": "pytorch",
        "param_count": 1000,
        "flops_per_sample": 1.0e6,
        "spec": s,
        "warmup": warmup,
    }
