"""Library models' families and sizes, for the model search: which family
each name belongs to (timm's module, decoder or encoder for a transformers
model type, keras.applications' module), and each model's parameter count
at its defaults, counted without allocating its weights where the library
allows (timm and transformers on PyTorch's meta device; keras builds the
model with ``weights=None``)."""

from __future__ import annotations

from typing import Any


def timm_families() -> dict[str, str]:
    """``timm:NAME`` → the timm module that defines it (``resnet``, ``vision_transformer``)."""
    try:
        import timm
    except ImportError:
        return {}
    return {f"timm:{n}": m for m in timm.list_modules() for n in timm.list_models(module=m)}


def hf_families() -> dict[str, str]:
    """``hf:MODEL_TYPE`` → ``decoder`` or ``encoder``, for the model types the
    studio trains (a causal language model, or an encoder with a
    sequence-classification head)."""
    try:
        from transformers.models.auto import modeling_auto as auto
    except ImportError:
        return {}
    causal = set(auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES) - set(auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES)
    out = {f"hf:{n}": "decoder" for n in causal}
    for n in auto.MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES:
        out.setdefault(f"hf:{n}", "encoder")
    return out


def keras_families() -> dict[str, str]:
    """``keras:NAME`` → the keras.applications module (``resnet``, ``efficientnet``)."""
    try:
        import keras
    except ImportError:
        return {}
    from .keras_models import names

    apps = vars(keras.applications)
    return {f"keras:{n}": apps[n].__module__.rsplit(".", 1)[-1] for n in names(keras)}


def _count_timm(name: str) -> int:
    import timm
    import torch

    with torch.device("meta"):
        model = timm.create_model(name, pretrained=False)
    return sum(p.numel() for p in model.parameters())


def _count_hf(model_type: str, family: str) -> int:
    import torch
    import transformers

    config = transformers.AutoConfig.for_model(model_type)
    with torch.device("meta"):
        if family == "decoder":
            model = transformers.AutoModelForCausalLM.from_config(config)
        else:
            if getattr(config, "pad_token_id", None) is None:
                config.pad_token_id = 0
            model = transformers.AutoModelForSequenceClassification.from_config(config)
    return sum(p.numel() for p in model.parameters())


def _count_keras(name: str) -> int:
    import keras

    model = getattr(keras.applications, name)(weights=None)
    count = int(model.count_params())
    keras.backend.clear_session()
    return count


def sizes(names: list[str]) -> list[dict[str, Any]]:
    """Each name's ``{"name", "family", "params"}``, or ``{"name", "error"}``
    when this environment's libraries cannot build it."""
    out: list[dict[str, Any]] = []
    families: dict[str, str] = {}
    if any(n.startswith(("timm:", "hf:")) for n in names):
        families.update(timm_families())
        families.update(hf_families())
    if any(n.startswith("keras:") for n in names):
        families.update(keras_families())
    for ref in names:
        library, _, name = ref.partition(":")
        family = families.get(ref)
        try:
            if family is None:
                raise ValueError("not a model of this environment's libraries")
            if library == "timm":
                params = _count_timm(name)
            elif library == "hf":
                params = _count_hf(name, family)
            else:
                params = _count_keras(name)
            out.append({"name": ref, "family": family, "params": int(params)})
        except Exception as e:  # a model that cannot be built is said; the others go on
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            out.append({"name": ref, "error": f"{type(e).__name__}: {first}"[:300]})
    return out
