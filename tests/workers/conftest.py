"""Shared pieces of the Python workers' unit tests (`workers/python`): plans
as the studio sends them. The files in `plans/` are real plans, each saved
from a worker the CLI started (they pass the schema made from the core
crate's ``WorkerPlan``; a change there that they no longer fit fails these
tests, and they are saved again)."""

import copy
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "workers", "python"))
PLANS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plans")


def saved_plan(name):
    with open(os.path.join(PLANS, f"{name}.json"), encoding="utf-8") as f:
        return json.load(f)


def plan_dict(**spec):
    """The saved plan of a small CNN (``resnet_mini``, synthetic data, 20
    steps, no target, no profile) with ``spec`` fields replaced
    (``warmup`` replaces the plan's warm-up)."""
    plan = copy.deepcopy(saved_plan("resnet_mini"))
    plan.pop("profile", None)
    plan["warmup"] = spec.pop("warmup", {"steps": 2})
    s = plan["spec"]
    s.update(data="synthetic", length={"steps": 20}, target_accuracy=None, stop_at_target=False, seed=7)
    s.update(window_steps=5, synthetic_samples=64)
    s.update(spec)
    return plan
