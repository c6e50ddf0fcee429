"""``python -m trainbench_worker FRAMEWORK describe``: a library model or a
model from a person's file built once (as a run would build it: the plan on
stdin), its trainable parameters counted on the object and its training
FLOPs per sample counted as the run counts them; nothing trains. Prints one
JSON object: ``{"param_count", "flops_per_sample", "flops_method",
"family", "input"}``, or ``{"field", "message"}`` for what was refused."""

import json
import math
import sys

from . import file_models, protocol
from .harness import Plan
from .protocol import WorkerError


def _torch(plan):
    import torch

    from . import library_models
    from .torch_worker import _sample_loss

    torch.manual_seed(plan.seed)
    if plan.config["family"] == "library":
        model = library_models.build(plan, _sample_loss(plan))
    else:
        model = file_models.build_torch(plan, _sample_loss(plan))
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _tensorflow(plan):
    from . import keras_models

    if plan.config["family"] == "library":
        return keras_models.count(keras_models.build(plan))
    model = file_models.build_keras(plan)
    return sum(math.prod(w.shape) for w in model.trainable_weights)


def _jax(plan):
    import jax

    from .jax_models import _init_variables, _size
    from .jax_worker import _cross_entropy

    model = file_models.build_flax(plan)
    variables = _init_variables(model, plan.config, jax.random.PRNGKey(plan.seed))
    file_models.flax_flops(plan, model, variables, _cross_entropy)
    return _size(variables["params"])


def describe(obj):
    plan = Plan(obj)
    family = plan.config["family"]
    if family not in ("library", "file"):
        return {"field": "model", "message": f"model = {plan.model}: the catalogue describes its own models"}
    build = {"pytorch": _torch, "tensorflow": _tensorflow, "jax": _jax}.get(plan.framework)
    try:
        if build is None or (family == "library" and plan.framework == "jax"):
            raise WorkerError("unsupported", f"framework = {plan.framework}: not for model {plan.model}", "framework")
        count = build(plan)
    except WorkerError as e:
        return {"field": e.field or "model", "message": e.message}
    c = plan.config
    # The input it was built and counted at (a library model's from its
    # library's default configuration unless the run gave one).
    shape = file_models.sample_shape(c)
    return {
        "param_count": int(count),
        "flops_per_sample": plan.flops_per_sample,
        "flops_method": plan.flops_method,
        "family": plan.traits.trained_as(),
        "input": list(shape) if shape else None,
    }


def main():
    # What the person's code prints goes to stderr: the answer is the only stdout line.
    plan = json.load(sys.stdin)
    protocol.take_stdout()
    answer = describe(plan)
    protocol._OUT.write(json.dumps(answer) + "\n")
    protocol.flush()
