"""Library models for the PyTorch worker: ``timm:NAME`` and ``hf:MODEL_TYPE?key=value&…``.

The core crate checks the name's syntax and sends it as ``model_config``
(``family = "library"``); here the installed library says whether the name
exists (an unknown one is refused, with the closest names, before anything
trains) and builds the architecture without weights (nothing is downloaded).
The harness then trains it like a built-in model. Parameters are counted on
the model object and FLOPs per sample with ``torch.utils.flop_counter``.

The plan is completed for the data and the loss: the model's traits
(``trainbench_worker.traits``) are set to images, classified (timm); tokens,
each predicting the next (an ``hf:`` causal language model); or tokens,
classified (an ``hf:`` encoder, trained on sequence classification); and
``plan.config`` gains the input's shape.
"""

import copy
import difflib

import torch
from torch import nn

from .protocol import WorkerError, bad_config, first_line, unsupported
from .traits import CLASSIFIED_TOKENS, IMAGE, NEXT_TOKENS

SEARCH_LIMIT = 50

FLOPS_METHOD = (
    "counted: torch.utils.flop_counter.FlopCounterMode over one forward and backward at batch 2, halved"
    "; a grouped convolution's weight gradient counted per group"
)
DEFAULT_IMAGE_CLASSES = 1000
DEFAULT_HF_LABELS = 2


def close_names(name, names, n=5):
    """The closest known names (difflib), for a refusal's message."""
    return difflib.get_close_matches(name, list(names), n=n, cutoff=0.6)


def _unknown(ref, what, name, names):
    close = close_names(name, names)
    hint = f" (closest: {', '.join(close)})" if close else ""
    return bad_config(f"model = {ref} is not allowed: expected {what}{hint}", "model")


def _import(package, ref):
    try:
        return __import__(package)
    except ImportError as e:
        raise unsupported(
            f"model = {ref}: {package} is not installed in this PyTorch environment ({e})", "model"
        ) from e


class _Logits(nn.Module):
    """A Hugging Face model as the harness calls a model: token ids in, logits out."""

    def __init__(self, inner, causal):
        super().__init__()
        self.inner = inner
        self.causal = causal

    def forward(self, x):
        if self.causal:
            return self.inner(input_ids=x, use_cache=False).logits
        return self.inner(input_ids=x).logits


def _timm_known(c, ref):
    timm = _import("timm", ref)
    if not timm.is_model(c["name"]):
        raise _unknown(ref, "a timm architecture (timm.list_models())", c["name"], timm.list_models())
    return timm


def _timm(plan, c, ref):
    timm = _timm_known(c, ref)
    name = c["name"]
    cfg = timm.models.get_pretrained_cfg(name)
    default_size = int(cfg.input_size[-1]) if cfg is not None and cfg.input_size else 224
    default_classes = int(cfg.num_classes) if cfg is not None and cfg.num_classes else DEFAULT_IMAGE_CLASSES
    size = int(c.get("image_size") or default_size)
    classes = int(c.get("num_classes") or default_classes)

    def build():
        if c.get("image_size"):
            try:  # models with a fixed input (ViTs) take the size; convolutional ones any
                return timm.create_model(name, pretrained=False, num_classes=classes, img_size=size)
            except TypeError:
                pass
        return timm.create_model(name, pretrained=False, num_classes=classes)

    plan.set_traits(IMAGE)
    c.update(in_channels=3, image_size=size, num_classes=classes)
    return build, (3, size, size)


def _typed(current, text):
    """An override's value in the type of the configuration's default."""
    if isinstance(current, bool) or text in ("true", "false"):
        if text not in ("true", "false"):
            raise ValueError("true or false")
        return text == "true"
    if isinstance(current, int):
        return int(text)
    if isinstance(current, float):
        return float(text)
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _hf_config(transformers, c, ref):
    from transformers import CONFIG_MAPPING

    name = c["name"]
    if name not in CONFIG_MAPPING:
        raise _unknown(ref, "a transformers model type (its configuration mapping)", name, CONFIG_MAPPING.keys())
    defaults = CONFIG_MAPPING[name]()
    known = defaults.to_dict()
    overrides = {}
    for key, text in (c.get("overrides") or {}).items():
        if key not in known and not hasattr(defaults, key):
            raise _unknown(ref, f"overrides that {type(defaults).__name__} has", key, known)
        try:
            overrides[key] = _typed(known.get(key, getattr(defaults, key, None)), text)
        except ValueError as e:
            raise bad_config(
                f"model = {ref} is not allowed: expected {key} = a value of its type ({e})", "model"
            ) from e
    return transformers.AutoConfig.for_model(name, **overrides)


def _hf_known(c, ref):
    """(transformers, its configuration with the overrides, causal?) or a refusal."""
    transformers = _import("transformers", ref)
    from transformers.models.auto import modeling_auto as auto

    config = _hf_config(transformers, c, ref)
    name = c["name"]
    causal = name in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and name not in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES
    if not causal and name not in auto.MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES:
        raise bad_config(
            f"model = {ref} is not allowed: expected a decoder (causal language model) or an encoder "
            "with a sequence-classification head in transformers",
            "model",
        )
    return transformers, config, causal


def _text_fits(data, ref, causal, vocab_size):
    """The text corpus (byte-level tokens, trained on next tokens) fits a
    decoder whose vocabulary holds the 256 byte values; an encoder, which
    classifies whole sequences, has no labels in it."""
    if data != "text":
        return
    if not causal:
        raise bad_config(
            f"data = text is not allowed: expected synthetic for the encoder {ref} "
            "(the text corpus trains language models on next tokens; an encoder classifies sequences)",
            "data",
        )
    if vocab_size < 256:
        raise bad_config(
            f"vocab_size = {vocab_size} is not allowed: expected 256 or more with data = text "
            f"(byte-level tokens; give {ref.split('?')[0]}?vocab_size=256 or more)",
            "vocab_size",
        )


def _hf(plan, c, ref):
    transformers, config, causal = _hf_known(c, ref)
    seq_len = int(c["seq_len"])
    longest = getattr(config, "max_position_embeddings", None)
    if isinstance(longest, int) and seq_len > longest:
        raise bad_config(
            f"seq_len = {seq_len} is not allowed: expected at most {longest} (max_position_embeddings of {ref})",
            "seq_len",
        )
    c.update(seq_len=seq_len, vocab_size=int(config.vocab_size))
    _text_fits(plan.data, ref, causal, int(config.vocab_size))
    if causal:
        if c.get("num_classes"):
            raise bad_config(
                f"num_classes = {c['num_classes']} is not allowed: expected no value for the decoder {ref} "
                "(it predicts the next token over its vocabulary)",
                "num_classes",
            )
        c.pop("num_classes", None)
        plan.set_traits(NEXT_TOKENS)

        def build():
            return _Logits(transformers.AutoModelForCausalLM.from_config(config), causal=True)
    else:
        config.num_labels = int(c.get("num_classes") or DEFAULT_HF_LABELS)
        if getattr(config, "pad_token_id", None) is None:
            config.pad_token_id = 0
        c["num_classes"] = config.num_labels
        plan.set_traits(CLASSIFIED_TOKENS)

        def build():
            return _Logits(transformers.AutoModelForSequenceClassification.from_config(config), causal=False)

    return build, (seq_len + 1,) if causal else (seq_len,)


def conv_backward_flops(
    grad_out_shape,
    x_shape,
    w_shape,
    _bias,
    _stride,
    _padding,
    _dilation,
    transposed,
    _output_padding,
    groups,
    output_mask,
    out_shape=None,
    **_kwargs,
):
    """FLOPs of ``aten.convolution_backward``: PyTorch's own formula
    (``torch.utils.flop_counter.conv_backward_flop``) with the weight
    gradient's term divided by the groups. PyTorch counts that term as one
    convolution over every input channel, so a depthwise 7×7 layer's backward
    counted 64 times its work at 64 channels, and a ConvNeXt's training FLOPs
    8.3 times its forward instead of about 3 (MFU as much too high). The input
    gradient's term takes the weight's shape, which already holds the groups."""
    from torch.utils.flop_counter import conv_flop_count

    def t(shape):
        return [shape[1], shape[0], *shape[2:]]

    flops = 0
    if output_mask[0]:
        flops += conv_flop_count(list(grad_out_shape), list(w_shape), list(out_shape[0]), not transposed)
    if output_mask[1]:
        grad_w = list(out_shape[1])
        if transposed:
            whole = conv_flop_count(t(grad_out_shape), t(x_shape), t(grad_w), transposed=False)
        else:
            whole = conv_flop_count(t(x_shape), t(grad_out_shape), t(grad_w), transposed=False)
        flops += whole // max(int(groups), 1)
    return flops


def flops_per_sample(model, sample_shape, loss_of):
    """Training FLOPs of one sample: one forward and backward at batch 2,
    halved (the counted work grows with the batch; at batch 1 a batch-norm
    layer whose map is down to one pixel has one value per channel, which it
    cannot train on), counted by PyTorch's FlopCounterMode on a copy (the model's weights,
    gradients and random state are left as they were). Attention runs on
    scaled_dot_product_attention's math backend while counting: the counter
    sees its matrix multiplies (the CPU's fused kernel it does not count, and
    the copy is on the CPU), so counted and analytical figures agree."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    twin = copy.deepcopy(model).cpu().train()
    batch = 2
    if len(sample_shape) == 1:
        x = torch.randint(0, 2, (batch, *sample_shape), dtype=torch.long)
    else:
        x = torch.randn(batch, *sample_shape)
    counting = FlopCounterMode(display=False, custom_mapping={torch.ops.aten.convolution_backward: conv_backward_flops})
    with torch.random.fork_rng(devices=[]), sdpa_kernel(SDPBackend.MATH), counting as counter:
        loss_of(twin, x).backward()
    return float(counter.get_total_flops()) / batch


def build(plan, loss_of):
    """Builds the library model of ``plan`` on the CPU, completes the plan's
    traits and input shape, and sets ``plan.flops_per_sample`` (counted) and
    ``plan.flops_method``. ``loss_of(model, x)``: the harness's loss on a batch."""
    c = plan.config
    ref = plan.model
    maker = {"timm": _timm, "hf": _hf}.get(c.get("library"))
    if maker is None:
        raise bad_config(f"model = {ref} is not allowed: expected timm:NAME or hf:MODEL_TYPE", "model")
    make, sample_shape = maker(plan, c, ref)
    try:
        model = make()
    except (ValueError, TypeError, AttributeError, KeyError) as e:
        raise WorkerError("bad_config", f"model = {ref} could not be built: {first_line(e)[:500]}", "model") from e
    plan.flops_per_sample = flops_per_sample(model, sample_shape, loss_of)
    plan.flops_method = FLOPS_METHOD
    return model


def reference(c):
    """The model's name as written (``hf:llama?hidden_size=64``)."""
    overrides = "&".join(f"{k}={v}" for k, v in sorted((c.get("overrides") or {}).items()))
    return f"{c['library']}:{c['name']}" + (f"?{overrides}" if overrides else "")


def check(configs):
    """For each library ``model_config`` (with the ``data`` it is to train
    on): None when the installed library has the name (and the overrides)
    and the model can train on that data, else ``{"field", "message"}``
    (nothing is built)."""
    out = []
    for c in configs:
        ref = reference(c)
        try:
            if c.get("library") == "timm":
                _timm_known(c, ref)
            elif c.get("library") == "hf":
                _, config, causal = _hf_known(c, ref)
                _text_fits(c.get("data"), ref, causal, int(config.vocab_size))
            else:
                raise bad_config(f"model = {ref} is not allowed: expected timm:NAME or hf:MODEL_TYPE", "model")
            out.append(None)
        except WorkerError as e:
            out.append({"field": e.field or "model", "message": e.message})
    return out


def search(text, limit=SEARCH_LIMIT):
    """Library names containing ``text`` (case-insensitive), at most ``limit``
    of each library; a library that is not installed gives none."""
    text = text.lower()
    found = {}
    try:
        import timm

        found["timm"] = [f"timm:{n}" for n in timm.list_models() if text in n.lower()][:limit]
    except ImportError:
        found["timm"] = []
    try:
        from transformers import CONFIG_MAPPING

        found["hf"] = [f"hf:{n}" for n in sorted(CONFIG_MAPPING.keys()) if text in n.lower()][:limit]
    except ImportError:
        found["hf"] = []
    from .model_sizes import hf_families, timm_families

    families = {**timm_families(), **hf_families()}
    found["families"] = {n: families[n] for n in found["timm"] + found["hf"] if n in families}
    return found
