"""The learning-rate schedule and the warm-up every worker uses, as the core
crate defines them (``trainbench_core::spec::learning_rate`` and
``PlanWarmup``)."""

import math

import pytest
from conftest import plan_dict
from trainbench_worker.harness import Plan, learning_rate
from trainbench_worker.protocol import WorkerError


def test_warm_up_rises_linearly_to_the_peak():
    assert [learning_rate(1.0, s, 4, 100) for s in (1, 2, 3, 4)] == [0.25, 0.5, 0.75, 1.0]


def test_after_warm_up_the_rate_decays_by_a_cosine_to_zero_at_the_last_step():
    peak, warmup, total = 2.0, 10, 110
    assert learning_rate(peak, 60, warmup, total) == pytest.approx(peak / 2)
    assert learning_rate(peak, total, warmup, total) == pytest.approx(0.0, abs=1e-12)
    rates = [learning_rate(peak, s, warmup, total) for s in range(warmup, total + 1)]
    assert all(a >= b for a, b in zip(rates, rates[1:]))
    # Past the end it stays at zero instead of rising again.
    assert learning_rate(peak, total + 50, warmup, total) == pytest.approx(0.0, abs=1e-12)


def test_without_warm_up_the_first_step_uses_the_cosine():
    assert learning_rate(1.0, 1, 0, 3) == pytest.approx(0.5 * (1 + math.cos(math.pi / 3)))


def test_a_warm_up_in_steps_is_taken_as_given():
    assert Plan(plan_dict(warmup={"steps": 3})).warmup(1000) == 3


def test_a_warm_up_rule_is_applied_to_the_total_only_the_worker_knows():
    plan = Plan(plan_dict(warmup={"of_total": {"divisor": 20, "min_steps": 1}}, length={"epochs": 2}))
    assert plan.warmup(400) == 20
    assert plan.warmup(10) == 1


def test_a_plan_of_another_protocol_is_refused_naming_the_field():
    d = plan_dict()
    d["protocol"] = 999
    with pytest.raises(WorkerError) as e:
        Plan(d)
    assert e.value.field == "protocol"
    assert "999" in e.value.message


def test_the_global_batch_counts_every_device_of_every_node():
    assert Plan(plan_dict(batch_size=8, devices=2, nodes=3)).global_batch == 48
