"""``python -m trainbench_worker pytorch capture --out FILE.pt``: a model from
a person's file captured with TorchScript for the libtorch worker.

The plan on stdin is the run's (as the PyTorch worker would get it). The
model is built as the PyTorch worker builds it (``file_models.build_torch``:
the file's SHA-256 checked, FUNCTION called, one forward pass and the
logits' shape checked, FLOPs counted), then captured: ``torch.jit.script``
first, else ``torch.jit.trace`` on an example input of the run's shape (in
training mode; a trace PyTorch warns may not be the model, a
``TracerWarning``, is refused). The module is saved to FILE.pt. Prints one JSON object:
``{"param_count", "flops_per_sample", "flops_method", "method"}`` (the
trainable parameters counted on the PyTorch module, shared ones once), or
``{"field", "message"}`` when the model cannot be captured (both
TorchScript errors, naming the file and the function).
"""

import argparse
import json
import sys
import warnings

from . import file_models, protocol
from .harness import Plan, inputs_and_targets
from .protocol import WorkerError, first_line

ERROR_CHARS = 1500


def _example(plan):
    """An input of the run's shape at batch 2, as the harness feeds it."""
    import torch

    c = plan.config
    shape = file_models.sample_shape(c)
    if len(shape) == 1:
        x = torch.randint(0, int(c["vocab_size"]), (2, *shape), dtype=torch.long)
    else:
        x = torch.randn(2, *shape)
    x, _ = inputs_and_targets(plan, x, torch.zeros(2, dtype=torch.long))
    return x


def _why(e):
    """TorchScript's message, bounded (its source excerpts included)."""
    text = str(e).strip() or type(e).__name__
    if len(text) > ERROR_CHARS:
        text = text[:ERROR_CHARS] + "…"
    return f"{type(e).__name__}: {text}"


def capture(plan):
    """The scripted (or traced) module of the plan's file, its method and
    the PyTorch module's trainable parameters."""
    import torch

    from .torch_worker import _sample_loss

    torch.manual_seed(plan.seed)
    model = file_models.build_torch(plan, _sample_loss(plan))
    count = sum(p.numel() for p in model.parameters() if p.requires_grad)
    model.train()
    try:
        return torch.jit.script(model), "torch.jit.script", count
    except Exception as scripted:  # TorchScript's own errors have no common base
        script_error = _why(scripted)
    c = plan.config
    try:
        with torch.random.fork_rng(devices=[]), warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", torch.jit.TracerWarning)
            traced = torch.jit.trace(model, _example(plan), check_trace=False)
        # A trace that left the tensors (to Python numbers, lists, NumPy) is
        # not the model: refused rather than trained wrong.
        off = [w for w in said if issubclass(w.category, torch.jit.TracerWarning)]
        if off:
            raise RuntimeError(f"{off[0].category.__name__}: {off[0].message}")
        return traced, "torch.jit.trace", count
    except Exception as e:
        raise WorkerError(
            "bad_config",
            f"model = {plan.model}: TorchScript could not capture the module that {c['function']}() in {c['path']} "
            f"returns, and the libtorch worker trains a TorchScript capture (framework pytorch trains it as it is). "
            f"torch.jit.script said {script_error}\ntorch.jit.trace said {_why(e)}",
            "model",
        ) from e


def main(argv):
    ap = argparse.ArgumentParser(prog="trainbench_worker pytorch capture")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    obj = json.load(sys.stdin)
    # What the person's code prints goes to stderr: the answer is the only stdout line.
    protocol.take_stdout()
    plan = Plan(obj)
    try:
        module, method, count = capture(plan)
        module.save(args.out)
        answer = {
            "param_count": int(count),
            "flops_per_sample": plan.flops_per_sample,
            "flops_method": plan.flops_method,
            "method": method,
        }
    except WorkerError as e:
        answer = {"field": e.field or "model", "message": e.message}
    except Exception as e:  # saving failed: the studio's side, said as such
        answer = {"field": "model", "message": f"model = {plan.model}: the capture could not be saved: {first_line(e)}"}
    protocol._OUT.write(json.dumps(answer) + "\n")
    protocol.flush()
