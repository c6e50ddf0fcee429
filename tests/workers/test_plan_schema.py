"""A plan is checked against the schema made from the core crate's
``WorkerPlan`` before anything starts: every plan the studio writes passes,
anything else is refused naming the field, the value and what is allowed."""

import copy

import pytest
from conftest import plan_dict, saved_plan
from trainbench_worker.harness import Plan
from trainbench_worker.plan_schema import check_plan
from trainbench_worker.protocol import WorkerError


@pytest.mark.parametrize("name", ["resnet_mini", "gpt2_tiny", "bert_tiny", "vit_mini_patch4_32", "model_file"])
def test_every_saved_plan_passes(name):
    check_plan(saved_plan(name))


def refused(plan):
    with pytest.raises(WorkerError) as e:
        Plan(plan)
    assert e.value.cls == "bad_config"
    return e.value


def test_a_value_of_the_wrong_type_is_refused_naming_the_field():
    e = refused(plan_dict(batch_size="eight"))
    assert e.field == "batch_size"
    assert e.message == 'plan: batch_size = "eight" is not allowed: expected integer'


def test_a_missing_field_is_refused_naming_it():
    plan = plan_dict()
    del plan["spec"]["lr"]
    e = refused(plan)
    assert e.field == "lr" and "(missing)" in e.message and "required" in e.message


def test_a_value_outside_its_choices_is_refused_with_the_choices():
    e = refused(plan_dict(precision="fp8"))
    assert e.field == "precision"
    assert '"amp-bf16"' in e.message and '"fp32"' in e.message


def test_a_nested_field_is_named_by_its_path():
    plan = plan_dict()
    plan["spec"]["model_config"]["image_size"] = "big"
    e = refused(plan)
    assert e.field == "model_config.image_size"


def test_an_unknown_model_family_is_refused():
    plan = plan_dict()
    plan["spec"]["model_config"]["family"] = "perceiver"
    assert refused(plan).field.startswith("model_config")


def test_a_length_with_a_field_it_does_not_have_is_refused():
    e = refused(plan_dict(length={"steps": 3, "minutes": 2}))
    assert e.field.startswith("length")


def test_a_negative_count_is_refused():
    e = refused(plan_dict(seed=-1))
    assert e.field == "seed" and "≥ 0" in e.message


def test_a_device_that_is_neither_cpu_nor_cuda_is_refused():
    e = refused(plan_dict(device="tpu:0"))
    assert e.field == "device"


def test_a_plan_left_as_sent_is_not_changed_by_the_check():
    plan = saved_plan("gpt2_tiny")
    before = copy.deepcopy(plan)
    Plan(plan)
    assert plan == before


def test_a_catalogue_models_traits_come_in_its_plan():
    plan = Plan(saved_plan("gpt2_tiny"))
    assert plan.traits.tokens and plan.traits.next_token and not plan.traits.binary
    a = plan.traits.attention
    assert a is not None and a.causal and a.dropout and (a.tokens, a.heads, a.head_dim) == (128, 2, 64)
    vit = Plan(saved_plan("vit_mini_patch4_32")).traits
    assert vit.input == "image" and vit.attention is not None and not vit.attention.causal
    assert Plan(saved_plan("resnet_mini")).traits.attention is None


def test_a_file_models_traits_are_set_once_by_its_builder():
    from trainbench_worker import traits

    plan = Plan(saved_plan("model_file"))
    with pytest.raises(RuntimeError, match="before its builder set them"):
        _ = plan.traits
    plan.set_traits(traits.IMAGE)
    plan.set_traits(traits.IMAGE)  # the same again: kept
    assert plan.traits.trained_as() == "image"
    with pytest.raises(RuntimeError, match="set twice"):
        plan.set_traits(traits.NEXT_TOKENS)


def test_traits_of_another_shape_are_refused_naming_the_field():
    obj = saved_plan("bert_tiny")
    obj["traits"]["objective"] = "regression"
    with pytest.raises(WorkerError) as e:
        Plan(obj)
    assert e.value.field == "traits.objective"
