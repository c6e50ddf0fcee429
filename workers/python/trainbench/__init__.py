"""Report your own training loop's steps to TrainBench Studio.

Add up to three lines to a training script::

    import trainbench

    trainbench.model(model)                       # optional: its parameters are counted
    for x, y in loader:
        loss = train_step(x, y)
        trainbench.step(samples=len(x), loss=loss)  # after each optimizer step
    trainbench.evaluate(accuracy=acc)             # optional: after an evaluation

Run alone (``python train.py``), every call returns at once and does nothing
else: the script behaves as before. Run by the studio
(``trainbench run --script train.py -- ARGS``), the calls report the steps:
the studio times windows of steps between two device synchronisations it
makes on the loss you pass, and adds telemetry, memory, energy, provenance,
comparisons and reports.

This file has no dependency beyond Python itself: copy it next to a script
that runs in an environment without the studio. Under the studio, the
studio's worker package provides what the calls report to.
"""

import os as _os

__all__ = ["step", "evaluate", "model", "active"]

# Set only when the studio runs the script (TRAINBENCH_SCRIPT names it): the
# studio's worker package then holds the session the calls report to.
_session = None
if _os.environ.get("TRAINBENCH_SCRIPT"):
    try:
        from trainbench_worker.script_session import current as _current

        _session = _current()
    except ImportError:  # the studio's worker package is not on the path
        _session = None


def active():
    """Whether the studio is measuring this script."""
    return _session is not None


def step(samples, loss=None, *, lr=None, flops_per_sample=None):
    """Call after each optimizer step.

    ``samples``: the samples this step trained on (all devices together).
    ``loss``: the step's loss as your framework returns it (a tensor or
    array is fine: the studio reads it only at the end of a timing window,
    after synchronising the device on it). ``lr``: the learning rate, if you
    want it stored beside each window. ``flops_per_sample``: training FLOPs
    per sample (forward and backward), if you know them: MFU needs them.
    """
    if _session is not None:
        _session.step(samples, loss, lr, flops_per_sample)


def evaluate(accuracy, loss=None, *, samples=None, epoch=None):
    """Call after an evaluation on held-out data: ``accuracy`` in [0, 1],
    optionally its ``loss``, the ``samples`` evaluated and the ``epoch``.
    The studio's time-to-accuracy is measured from the script's start to here.
    """
    if _session is not None:
        _session.evaluate(accuracy, loss, samples, epoch)


def model(obj):
    """Hand your model to the studio, which counts its parameters (a
    ``torch.nn.Module``, a ``keras.Model`` or a JAX/Flax parameter tree).
    Returns ``obj``, so ``model = trainbench.model(build())`` works."""
    if _session is not None:
        _session.model(obj)
    return obj
