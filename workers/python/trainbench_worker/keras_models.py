"""Library models for the TensorFlow worker: ``keras:NAME``.

NAME is an architecture of the installed ``keras.applications`` (``ResNet50``,
``MobileNetV3Small``, ``EfficientNetB0`` …), built with ``weights=None``
(nothing is downloaded) and a classifier head that returns logits
(``classifier_activation=None``), fed NHWC images like the built-in image
models. The input is square, of ``image_size`` pixels (the architecture's
ImageNet size unless the run gives one), with ``num_classes`` classes (1000
unless given). Parameters are the trainable weights of the model object, as
Keras's own ``model.summary()`` counts "Trainable params"; FLOPs are not
counted in TensorFlow (MFU not measured).
"""

import difflib
import math

from .protocol import WorkerError, bad_config, first_line, unsupported
from .traits import IMAGE

SEARCH_LIMIT = 50
DEFAULT_SIZE = 224
DEFAULT_CLASSES = 1000
# The ImageNet input sizes of the architectures not trained at 224 px.
SIZES = {
    "InceptionV3": 299,
    "InceptionResNetV2": 299,
    "Xception": 299,
    "NASNetLarge": 331,
    "EfficientNetB1": 240,
    "EfficientNetB2": 260,
    "EfficientNetB3": 300,
    "EfficientNetB4": 380,
    "EfficientNetB5": 456,
    "EfficientNetB6": 528,
    "EfficientNetB7": 600,
    "EfficientNetV2B1": 240,
    "EfficientNetV2B2": 260,
    "EfficientNetV2B3": 300,
    "EfficientNetV2S": 384,
    "EfficientNetV2M": 480,
    "EfficientNetV2L": 480,
}


def _keras(ref):
    try:
        import keras
    except ImportError as e:
        raise unsupported(f"model = {ref}: keras is not installed in this TensorFlow environment ({e})", "model") from e
    return keras


def names(keras):
    """The architectures of ``keras.applications``: its callables named in CamelCase."""
    return sorted(n for n, f in vars(keras.applications).items() if n[:1].isupper() and callable(f))


def _known(c, ref):
    keras = _keras(ref)
    known = names(keras)
    if c["name"] not in known:
        close = difflib.get_close_matches(c["name"], known, n=5, cutoff=0.6)
        hint = f" (closest: {', '.join(close)})" if close else ""
        raise bad_config(f"model = {ref} is not allowed: expected a keras.applications architecture{hint}", "model")
    return keras


def build(plan):
    """The architecture of ``plan`` built (in the caller's distribution
    scope); the plan's traits and input completed, its FLOPs not counted."""
    c = plan.config
    ref = plan.model
    keras = _known(c, ref)
    name = c["name"]
    size = int(c.get("image_size") or SIZES.get(name, DEFAULT_SIZE))
    classes = int(c.get("num_classes") or DEFAULT_CLASSES)
    try:
        model = getattr(keras.applications, name)(
            weights=None,
            include_top=True,
            input_shape=(size, size, 3),
            classes=classes,
            classifier_activation=None,
        )
    except (ValueError, TypeError) as e:
        raise WorkerError(
            "bad_config", f"model = {ref} could not be built at {size}x{size} px: {first_line(e)[:500]}", "model"
        ) from e
    plan.set_traits(IMAGE)
    c.update(in_channels=3, image_size=size, num_classes=classes)
    plan.flops_per_sample = None
    return model


def count(model):
    """Trainable parameters, as Keras's ``model.summary()`` says them."""
    return sum(math.prod(w.shape) for w in model.trainable_weights)


def reference(c):
    return f"keras:{c['name']}"


def check(configs):
    """For each ``keras:`` ``model_config``: None when keras.applications has
    it, else ``{"field", "message"}`` (nothing is built)."""
    out = []
    for c in configs:
        ref = reference(c)
        try:
            if c.get("library") != "keras":
                raise bad_config(f"model = {ref} is not allowed: expected keras:NAME in TensorFlow", "model")
            _known(c, ref)
            out.append(None)
        except WorkerError as e:
            out.append({"field": e.field or "model", "message": e.message})
    return out


def search(text, limit=SEARCH_LIMIT):
    """``keras:`` names containing ``text`` (case-insensitive), at most ``limit``."""
    try:
        import keras
    except ImportError:
        return {"keras": []}
    from .model_sizes import keras_families

    text = text.lower()
    found = [f"keras:{n}" for n in names(keras) if text in n.lower()][:limit]
    families = keras_families()
    return {"keras": found, "families": {n: families[n] for n in found if n in families}}
