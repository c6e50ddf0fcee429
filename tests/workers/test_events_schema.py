"""What a real worker prints, checked against ``events.schema.json``: the
schema the core crate makes from its ``Event`` (the one definition of what
the studio reads; a test there fails when the committed copy differs). Every
line must be one of its forms, with no field the studio does not know — a
field it does not know is dropped on the way in, silently."""

import copy
import json
import os
import subprocess
import sys
from typing import Any

from conftest import ROOT, plan_dict
from trainbench_worker import plan_schema

SCHEMA_PATH = os.path.join(ROOT, "workers", "python", "trainbench_worker", "events.schema.json")


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every object closed to fields it does not name, a
    form that refers to a struct (``breakdown``, ``profile``) merged with it."""
    s = copy.deepcopy(schema)

    def close(node: Any) -> None:
        if isinstance(node, dict):
            if "$ref" in node and "properties" in node:
                target = plan_schema._resolve(node.pop("$ref"), s)
                node["properties"] = {**copy.deepcopy(target.get("properties", {})), **node["properties"]}
                node["required"] = sorted(set(node.get("required", [])) | set(target.get("required", [])))
            if "properties" in node:
                node.setdefault("additionalProperties", False)
            for v in node.values():
                close(v)
        elif isinstance(node, list):
            for v in node:
                close(v)

    close(s)
    return s


def _events(plan: dict[str, Any], tmp_path: Any) -> list[dict[str, Any]]:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "workers", "python"), "OMP_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "trainbench_worker", "pytorch", "train", "--plan", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert lines, out.stderr[-2000:]
    return lines


def _check(events: list[dict[str, Any]]) -> None:
    schema = _strict(json.load(open(SCHEMA_PATH, encoding="utf-8")))
    for e in events:
        found = plan_schema.problems(e, schema, (), schema)
        assert not found, f"{e['event']}: {found[0]}"


def test_every_event_of_a_real_run_with_evaluations_and_a_profile_is_the_studios(tmp_path):
    plan = plan_dict(length={"steps": 8}, window_steps=2, data="mnist", eval_every_steps=4, target_accuracy=None)
    plan["profile"] = {"steps": 2}
    events = _events(plan, tmp_path)
    _check(events)
    kinds = {e["event"] for e in events}
    assert kinds == {"hello", "first_step", "window", "eval", "memory", "breakdown", "profile", "done"}, kinds


def test_a_failed_runs_error_event_is_the_studios(tmp_path):
    plan = plan_dict()
    plan["spec"]["batch_size"] = -1
    events = _events(plan, tmp_path)
    _check(events)
    assert [e["event"] for e in events] == ["error"]
    assert events[0]["field"] == "batch_size"


def test_the_strict_schema_refuses_a_field_the_studio_does_not_know():
    schema = _strict(json.load(open(SCHEMA_PATH, encoding="utf-8")))
    window = {"event": "window", "index": 0, "first_step": 2, "steps": 2, "samples": 16}
    window.update(start_ns=1, end_ns=2, loss_mean=2.3, lr=None)
    assert not plan_schema.problems(window, schema, (), schema)
    assert plan_schema.problems({**window, "loss_meen": 2.3}, schema, (), schema)
    breakdown = {"event": "breakdown", "whole_step_s": [0.1], "phases": [], "fused": None, "communication": None}
    assert not plan_schema.problems(breakdown, schema, (), schema)
    assert plan_schema.problems({**breakdown, "phasess": []}, schema, (), schema)
