"""A model from a person's own file: ``PATH.py:FUNCTION``.

The core crate checks the reference and the input the run gives, and sends
them as ``model_config`` (``family = "file"``) with the SHA-256 of the bytes
the studio read when it planned the run. Here the file is read once, its
hash checked (other bytes are refused: what trains is what was read), and
those bytes executed as a module; FUNCTION is called with no arguments and
what it returns is checked (its type, one forward pass at the input shape,
the output's shape) before anything is timed. Errors name the file and what
was expected, with the person's own traceback.

The plan is completed for the data and the loss: the model's traits
(``trainbench_worker.traits``) are set to images, classified; token
sequences, classified; or token sequences, next-token prediction over
``vocab_size``.
"""

import hashlib
import os
import sys
import traceback
import types

from .protocol import WorkerError, bad_config, first_line
from .traits import CLASSIFIED_TOKENS, IMAGE, NEXT_TOKENS, Traits

MAX_FILE_BYTES = 1 << 20
TRACEBACK_CHARS = 4000
MODULE_NAME = "trainbench_user_model"
_HERE = os.path.dirname(os.path.abspath(__file__))


def user_traceback(e):
    """The traceback of ``e`` raised in a person's code, bounded, without the
    studio's own frames (which called the person's code)."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None and tb.tb_frame.f_code.co_filename.startswith(_HERE):
        tb = tb.tb_next
    text = "".join(traceback.format_exception(type(e), e, tb))
    if len(text) > TRACEBACK_CHARS:
        text = "…" + text[-TRACEBACK_CHARS:]
    return text


def _user_error(ref, doing, e):
    """The person's code raised ``e`` while ``doing``: their traceback, bounded."""
    text = user_traceback(e)
    return bad_config(f"model = {ref}: {doing} raised {type(e).__name__}: {first_line(e)[:300]}\n{text}", "model")


def _read(c, ref):
    path = c["path"]
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise bad_config(f"model = {ref}: the file cannot be read ({e.strerror or e})", "model") from e
    if len(data) > MAX_FILE_BYTES:
        raise bad_config(f"model = {ref}: the file is larger than {MAX_FILE_BYTES} bytes", "model")
    sha = hashlib.sha256(data).hexdigest()
    if sha != c["sha256"]:
        raise bad_config(
            f"model = {ref}: the file changed after the studio read it (SHA-256 {sha[:12]}… now, "
            f"{c['sha256'][:12]}… when the run was planned); start the run again to train what it holds now",
            "model",
        )
    return path, data


def load(c, ref):
    """FUNCTION of the file, from the bytes whose hash the plan carries."""
    path, data = _read(c, ref)
    module = types.ModuleType(MODULE_NAME)
    module.__file__ = path
    # As `python FILE.py` would: the file's folder first on the path, so that
    # it imports its neighbours; registered, so that dataclasses work.
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[MODULE_NAME] = module
    try:
        exec(compile(data, path, "exec"), module.__dict__)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # the person's code: any failure is theirs to read
        raise _user_error(ref, f"importing {os.path.basename(path)}", e) from e
    name = c["function"]
    fn = getattr(module, name, None)
    if fn is None or not callable(fn):
        defined = sorted(
            n
            for n, v in vars(module).items()
            if callable(v) and not n.startswith("_") and getattr(v, "__module__", None) == MODULE_NAME
        )
        listed = ", ".join(defined[:20]) or "none"
        raise bad_config(
            f"model = {ref}: expected {os.path.basename(path)} to define a function {name}() returning the model "
            f"(functions it defines: {listed})",
            "model",
        )
    return fn


def call(fn, ref):
    """FUNCTION()'s result, or the person's traceback."""
    try:
        return fn()
    except KeyboardInterrupt:
        raise
    except BaseException as e:
        raise _user_error(ref, f"calling {fn.__name__}()", e) from e


def input_kind(c) -> Traits:
    """The traits the run's input gives: images, classified; tokens,
    classified (with ``num_classes``); else tokens, each predicting the next."""
    if c.get("image_size"):
        return IMAGE
    return CLASSIFIED_TOKENS if c.get("num_classes") else NEXT_TOKENS


def sample_shape(c):
    """One sample's shape as the harness's data has it (NCHW images; a
    decoder's sequences one token longer: inputs and next tokens)."""
    kind = input_kind(c)
    if not kind.tokens:
        return (int(c["in_channels"]), int(c["image_size"]), int(c["image_size"]))
    return (int(c["seq_len"]) + (1 if kind.next_token else 0),)


def expected_output(c, batch):
    """The logits' shape the loss needs at ``batch``, and its words."""
    if input_kind(c).next_token:
        shape = (batch, int(c["seq_len"]), int(c["vocab_size"]))
        return shape, f"(batch, seq_len, vocab_size) = {shape}: a logit per token of the vocabulary at each position"
    shape = (batch, int(c["num_classes"]))
    return shape, f"(batch, num_classes) = {shape}: a logit per class"


def build_torch(plan, loss_of):
    """The PyTorch model of the file, checked, on the CPU; sets the plan's
    traits and counted FLOPs (as a library model's)."""
    import torch
    from torch import nn

    from . import library_models
    from .harness import inputs_and_targets

    c = plan.config
    ref = plan.model
    model = call(load(c, ref), ref)
    if not isinstance(model, nn.Module):
        raise bad_config(
            f"model = {ref}: {c['function']}() returned {type(model).__module__}.{type(model).__name__}, "
            "expected a torch.nn.Module (the PyTorch worker trains it)",
            "model",
        )
    if not any(p.requires_grad for p in model.parameters()):
        raise bad_config(
            f"model = {ref}: the torch.nn.Module {c['function']}() returned has no trainable parameters", "model"
        )
    plan.set_traits(input_kind(c))
    shape = sample_shape(c)
    batch = 2
    if len(shape) == 1:
        x = torch.randint(0, int(c["vocab_size"]), (batch, *shape), dtype=torch.long)
    else:
        x = torch.randn(batch, *shape)
    x, _ = inputs_and_targets(plan, x, torch.zeros(batch, dtype=torch.long))
    want, words = expected_output(c, batch)
    try:
        with torch.no_grad(), torch.random.fork_rng(devices=[]):
            out = model.eval()(x)
    except KeyboardInterrupt:
        raise
    except BaseException as e:
        raise _user_error(ref, f"one forward pass at input {tuple(x.shape)}", e) from e
    finally:
        model.train()
    if not isinstance(out, torch.Tensor):
        raise bad_config(
            f"model = {ref}: its forward returned {type(out).__name__}, expected a tensor of logits {words}", "model"
        )
    if tuple(out.shape) != want:
        raise bad_config(
            f"model = {ref}: its forward at input {tuple(x.shape)} returned shape {tuple(out.shape)}, expected {words}",
            "model",
        )
    try:
        plan.flops_per_sample = library_models.flops_per_sample(model, shape, loss_of)
        plan.flops_method = library_models.FLOPS_METHOD
    except WorkerError:
        raise
    except Exception as e:  # a model FlopCounterMode cannot follow: MFU is then not measured
        print(f"FLOPs not counted for {ref}: {first_line(e)}", file=sys.stderr)
        plan.flops_per_sample = None
    return model


def _check_output(ref, out, c, batch, shape_of):
    want, words = expected_output(c, batch)
    got = shape_of(out)
    if got is None:
        raise bad_config(
            f"model = {ref}: its forward returned {type(out).__name__}, expected a tensor of logits {words}", "model"
        )
    if tuple(got) != want:
        raise bad_config(f"model = {ref}: its forward returned shape {tuple(got)}, expected {words}", "model")


def _sample_nhwc(c, batch, np):
    """A check batch as TensorFlow and JAX are fed: NHWC images or token ids."""
    if not input_kind(c).tokens:
        s = int(c["image_size"])
        return np.zeros((batch, s, s, int(c["in_channels"])), np.float32)
    return np.zeros((batch, int(c["seq_len"])), np.int32)


def build_keras(plan):
    """The Keras model of the file, built by one forward pass (in the caller's
    distribution scope), checked; the plan's traits set. Its FLOPs are not
    counted (MFU not measured)."""
    import keras
    import numpy as np

    c = plan.config
    ref = plan.model
    model = call(load(c, ref), ref)
    if not isinstance(model, keras.Model):
        raise bad_config(
            f"model = {ref}: {c['function']}() returned {type(model).__module__}.{type(model).__name__}, "
            "expected a keras.Model (the TensorFlow worker trains it)",
            "model",
        )
    plan.set_traits(input_kind(c))
    x = _sample_nhwc(c, 2, np)
    try:
        out = model(x, training=False)
    except KeyboardInterrupt:
        raise
    except BaseException as e:
        raise _user_error(ref, f"one forward pass at input {x.shape}", e) from e
    _check_output(ref, out, c, 2, lambda o: getattr(o, "shape", None))
    if not model.trainable_weights:
        raise bad_config(f"model = {ref}: the keras.Model {c['function']}() returned has no trainable weights", "model")
    plan.flops_per_sample = None
    return model


def build_flax(plan):
    """The Flax module of the file, linen or NNX, as a linen module the JAX
    worker's ``init`` / ``apply(…, train=…)`` reach (``train`` passed on only
    when its ``__call__`` takes it; an NNX module carried by
    ``nnx_bridge``), checked at batch 2; the plan's traits set."""
    import inspect

    import jax
    import numpy as np
    from flax import linen

    from . import nnx_bridge

    c = plan.config
    ref = plan.model
    inner = call(load(c, ref), ref)
    if nnx_bridge.is_nnx(inner):
        if not nnx_bridge.has_params(inner):
            raise bad_config(f"model = {ref}: the flax.nnx.Module {c['function']}() returned has no nnx.Param", "model")
        try:
            model = nnx_bridge.as_linen(inner)
        except KeyboardInterrupt:
            raise
        except BaseException as e:
            raise _user_error(ref, "taking the NNX module apart (nnx.split)", e) from e
    elif isinstance(inner, linen.Module):
        takes_train = "train" in inspect.signature(type(inner).__call__).parameters

        class Wrapped(linen.Module):
            inner: linen.Module
            takes_train: bool

            def __call__(self, x, train=False):
                return self.inner(x, train=train) if self.takes_train else self.inner(x)

        model = Wrapped(inner=inner, takes_train=takes_train)
    else:
        raise bad_config(
            f"model = {ref}: {c['function']}() returned {type(inner).__module__}.{type(inner).__name__}, "
            "expected a flax.linen.Module or a flax.nnx.Module (the JAX worker trains it)",
            "model",
        )
    plan.set_traits(input_kind(c))
    x = _sample_nhwc(c, 2, np)
    try:
        variables = model.init(jax.random.PRNGKey(0), x, train=False)
        out = model.apply(variables, x, train=False)
    except KeyboardInterrupt:
        raise
    except BaseException as e:
        raise _user_error(ref, f"one forward pass at input {x.shape}", e) from e
    _check_output(ref, out, c, 2, lambda o: getattr(o, "shape", None))
    return model


def flax_flops(plan, model, variables, cross_entropy):
    """Training FLOPs of one sample: XLA's cost analysis of the gradient of
    the loss at batch 1 as traced, before the backend rewrites it (every
    operation XLA counts, element-wise ones included). The compiled program's
    analysis counts what the backend runs instead: on the CPU a depthwise
    convolution's weight gradient becomes one dense convolution masked per
    group, so a 7×7 depthwise layer over 64 channels counted 11 times the
    gradient's work (within 1.3 % of the traced figure for other layers).
    Sets the plan's figure and method; None where XLA gives none."""
    import jax
    import numpy as np

    c = plan.config
    x = _sample_nhwc(c, 1, np)
    if input_kind(c).next_token:
        x = np.zeros((1, int(c["seq_len"]) + 1), np.int32)
    y = np.zeros((1,), np.int32)
    params = variables["params"]
    rest = {k: v for k, v in variables.items() if k != "params"}

    from .harness import inputs_and_targets

    xs, ys = inputs_and_targets(plan, x, y)

    def loss(p):
        return cross_entropy(model.apply({"params": p, **rest}, xs, train=False), ys).mean()

    try:
        analysis = jax.jit(jax.grad(loss)).lower(params).cost_analysis()
        if isinstance(analysis, list):
            analysis = analysis[0] if analysis else {}
        flops = float(analysis.get("flops", 0.0)) if analysis else 0.0
    except Exception as e:  # no figure from this backend: MFU is then not measured
        print(f"FLOPs not counted for {plan.model}: {first_line(e)}", file=sys.stderr)
        flops = 0.0
    if flops > 0:
        plan.flops_per_sample = flops
        plan.flops_method = "counted: XLA's cost analysis of the gradient of the loss at batch 1, as traced"
    else:
        plan.flops_per_sample = None
