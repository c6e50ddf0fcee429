"""A Flax NNX module trained by the JAX worker's one training step.

The JAX worker trains a Flax linen module: ``init`` gives its variables,
``apply(variables, x, train=…, mutable=["batch_stats"])`` its logits and
updated state, and the step differentiates the loss with respect to
``variables["params"]``. An NNX module is an object that holds its own
state; ``nnx.split`` takes it apart into a static graph and pure state, and
``nnx.merge`` puts it back together inside a traced function (Flax's own
functional API). So the NNX module is carried inside a linen module:

- its ``nnx.Param`` variables are the linen parameters (collection
  ``params``, one entry ``nnx``, in the module's own tree), so AdamW, the
  precision, the devices' sharding, the parameter count and XLA's FLOPs
  count see exactly the NNX parameters;
- everything else it holds (batch-norm statistics, dropout's random-number
  streams, any other ``nnx.Variable``) is the step's mutable state
  (collection ``batch_stats``), written back after each training step, so
  running averages update and dropout draws a new mask each step;
- ``model.train()`` before a training call and ``model.eval()`` before an
  evaluation, as NNX code does (dropout on or off, batch norms using batch
  or running statistics).
"""

import inspect


def is_nnx(obj):
    """Whether ``obj`` is a Flax NNX module (false where NNX is not installed)."""
    try:
        from flax import nnx
    except ImportError:
        return False
    return isinstance(obj, nnx.Module)


def has_params(module):
    """Whether the NNX ``module`` holds any ``nnx.Param`` (what AdamW trains)."""
    import jax
    from flax import nnx

    return bool(jax.tree.leaves(nnx.state(module, nnx.Param)))


def as_linen(module):
    """The linen module that carries the NNX ``module`` (see the module's
    documentation). A ``train`` keyword of the module's ``__call__`` is passed
    on too, for code that takes one."""
    import jax
    from flax import linen, nnx

    graphdef, params, rest = nnx.split(module, nnx.Param, ...)
    initial_params = nnx.to_pure_dict(params)
    initial_rest = nnx.to_pure_dict(rest)
    takes_train = "train" in inspect.signature(type(module).__call__).parameters

    def filled(template, pure):
        # A fresh copy of the template at each trace, then the traced values put in.
        state = jax.tree.map(lambda v: v, template)
        nnx.replace_by_pure_dict(state, pure)
        return state

    class FromNnx(linen.Module):
        @linen.compact
        def __call__(self, x, train=False):
            p = self.param("nnx", lambda _rng: initial_params)
            r = self.variable("batch_stats", "nnx", lambda: initial_rest)
            model = nnx.merge(graphdef, filled(params, p), filled(rest, r.value))
            if train:
                model.train()
            else:
                model.eval()
            y = model(x, train=train) if takes_train else model(x)
            if self.is_mutable_collection("batch_stats"):
                r.value = nnx.to_pure_dict(nnx.split(model, nnx.Param, ...)[2])
            return y

    return FromNnx()
