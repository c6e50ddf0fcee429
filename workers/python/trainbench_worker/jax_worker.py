"""The JAX worker: Flax (linen) models, an optax AdamW step compiled ahead of time
with ``jax.jit``, fp32 / tf32 / bf16 / fp16-with-loss-scaling, and data
parallelism inside one process by sharding the batch over a device mesh.

The models are the PyTorch worker's (torch_worker.py) written for Flax: the same
layers, shapes and parameter counts, with images in NHWC. Parameter counts must
equal the catalogue's; :func:`count_params` traces the initialisation with
``jax.eval_shape``, so even ViT-G is counted without allocating it.

``jax`` is imported at the top: how many CPU devices there are and which
platforms start are set through ``jax.config`` in :class:`JaxBackend`, which
works as long as no backend has started yet (nothing here starts one earlier).
"""
import math
import os
import sys
import time

import flax
import flax.linen as nn
import jax
import jax.numpy as jnp
import jaxlib
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from .harness import (ADAMW_BETAS, ADAMW_EPS, TOKEN_FAMILIES, Backend, attention_shape, check_precision,
                      classification_loss_kind, cpu_name, eval_batch, has_attention_dropout, inputs_and_targets,
                      predictions_per_sample)
from .images import HostBatch
from .protocol import WorkerError, first_line, unsupported

# torch.cuda.amp.GradScaler's defaults, for amp-fp16.
LOSS_SCALE_INIT = 2.0 ** 16
LOSS_SCALE_GROWTH_INTERVAL = 2000


# --- models -----------------------------------------------------------------
#
# Every module takes ``dtype``, the compute dtype of its matmuls and
# convolutions (bfloat16 or float16 under AMP); parameters stay float32. As
# under torch.autocast, layer norms, softmax, the residual stream of the
# transformers and the loss stay float32; batch norms compute their statistics
# in float32 and return the compute dtype, as cuDNN's do.

_normal = nn.initializers.normal
# torch's default for nn.Linear / nn.Conv2d weights: kaiming_uniform(a=√5),
# which is U(±1/√fan_in).
_torch_default_kernel = nn.initializers.variance_scaling(1 / 3, "fan_in", "uniform")
# torchvision's ResNet convolutions: kaiming_normal(mode="fan_out", relu).
_he_fan_out = nn.initializers.variance_scaling(2.0, "fan_out", "normal")


def _torch_default_bias(fan_in):
    """torch's default bias init, U(±1/√fan_in)."""
    bound = 1 / math.sqrt(fan_in)

    def init(key, shape, dtype=jnp.float32):
        return jax.random.uniform(key, shape, dtype, -bound, bound)

    return init


def _dense(features, dtype, name):
    return nn.Dense(features, dtype=dtype, kernel_init=_normal(0.02), bias_init=nn.initializers.zeros, name=name)


def _layer_norm(eps, name):
    # Flax's defaults, as its users get them (one-pass "fast" variance). The
    # two-pass variance torch computes made XLA fuse each LayerNorm's
    # backward with the residual stream: 2.4x slower ViT steps on a CPU.
    return nn.LayerNorm(epsilon=eps, name=name)


def _attention(q, k, v, dtype, impl, dropout=None, causal=False):
    """softmax(QKᵀ/√d_head)·V on (batch, tokens, heads, d_head), the keys and
    values possibly with fewer heads (grouped-query attention); the softmax in
    float32, the two matmuls in the compute dtype. The named scope only labels
    the HLO (the operator profile's "attention", as torch's SDPA is there).

    On a CPU this is Flax's own ``nn.dot_product_attention`` (``impl="flax"``,
    dropping attention probabilities while training where the model does).
    Elsewhere ``jax.nn.dot_product_attention`` with ``implementation=impl``
    (``"xla"``, or ``"cudnn"`` for cuDNN's fused attention where the backend
    found it works, see :func:`attention_choice`); it has no dropout, so on a
    GPU a model that drops attention probabilities while training (BERT,
    GPT-2) has them written out here."""
    with jax.named_scope("trainbench.attention"):
        if impl == "flax":
            groups = q.shape[2] // k.shape[2]
            if groups > 1:
                k, v = jnp.repeat(k, groups, axis=2), jnp.repeat(v, groups, axis=2)
            mask = nn.make_causal_mask(jnp.ones(q.shape[:2], bool)) if causal else None
            drops = dropout is not None and not dropout.deterministic and dropout.rate > 0
            return nn.dot_product_attention(q, k, v, mask=mask, dtype=dtype, deterministic=not drops,
                                            dropout_rng=dropout.make_rng("dropout") if drops else None,
                                            dropout_rate=dropout.rate if drops else 0.0,
                                            force_fp32_for_softmax=True)
        if dropout is None or dropout.deterministic:
            return jax.nn.dot_product_attention(q, k, v, is_causal=causal, implementation=impl)
        groups = q.shape[2] // k.shape[2]
        if groups > 1:
            k, v = jnp.repeat(k, groups, axis=2), jnp.repeat(v, groups, axis=2)
        q = q / math.sqrt(q.shape[-1])
        logits = jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(jnp.float32)
        if causal:
            t, s = logits.shape[-2:]
            logits = jnp.where(jnp.tril(jnp.ones((t, s), bool)), logits, jnp.finfo(jnp.float32).min)
        probs = dropout(jax.nn.softmax(logits, axis=-1).astype(dtype))
        return jnp.einsum("bhqk,bkhd->bqhd", probs, v)


def attention_choice(config, dtype, cuda):
    """(implementation, what the run's ``execution`` says) for the model's
    attention: cuDNN's fused attention on a GPU when it compiles for the
    model's shape and compute dtype (bf16/fp16; a short probe here), else XLA."""
    shape = attention_shape(config)
    if shape is None:
        return "xla", None
    if not cuda:
        # Flax's own attention (einsum, softmax, einsum) is 7-12 % faster than
        # jax.nn.dot_product_attention's XLA path on a CPU, and it drops
        # attention probabilities as Flax users train BERT and GPT-2.
        why = ", with its attention dropout while training" if has_attention_dropout(config) else ""
        return "flax", ("attention: flax.linen.dot_product_attention, Flax's own (einsum · softmax in float32 · "
                        f"einsum, in XLA; CPU{why})")
    if has_attention_dropout(config):
        return "xla", ("attention: softmax(QKᵀ/√d)·V written out in XLA (the model drops attention probabilities "
                       "while training; jax.nn.dot_product_attention has no dropout)")
    if dtype not in (jnp.bfloat16, jnp.float16):
        return "xla", "attention: jax.nn.dot_product_attention, XLA implementation (cuDNN's takes bf16/fp16 only)"
    t, h, kv, hd = shape
    q = jax.ShapeDtypeStruct((1, t, h, hd), dtype)
    k = jax.ShapeDtypeStruct((1, t, kv, hd), dtype)
    causal = config["family"] == "decoder"
    try:
        f = jax.jit(jax.grad(lambda q, k, v: jax.nn.dot_product_attention(
            q, k, v, is_causal=causal, implementation="cudnn").astype(jnp.float32).sum(), argnums=(0, 1, 2)))
        f.lower(q, k, k).compile()
    except Exception as e:  # cuDNN too old, head size or sequence it does not take
        return "xla", f"attention: jax.nn.dot_product_attention, XLA implementation (cuDNN refused: {first_line(e)})"
    return "cudnn", "attention: jax.nn.dot_product_attention, cuDNN fused attention"


class VitBlock(nn.Module):
    heads: int
    mlp: int
    dtype: jnp.dtype
    attention: str

    @nn.compact
    def __call__(self, x):
        b, t, d = x.shape
        qkv = _dense(3 * d, self.dtype, "qkv")(_layer_norm(1e-6, "norm1")(x))
        qkv = qkv.reshape(b, t, 3, self.heads, d // self.heads)
        a = _attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], self.dtype, self.attention)
        x = x + _dense(d, self.dtype, "proj")(a.reshape(b, t, d))
        h = nn.gelu(_dense(self.mlp, self.dtype, "fc1")(_layer_norm(1e-6, "norm2")(x)), approximate=False)
        return x + _dense(d, self.dtype, "fc2")(h)


class Vit(nn.Module):
    """timm's VisionTransformer at its defaults (class token, learned positions,
    pre-norm blocks, LayerNorm eps 1e-6, exact GELU, head on the class token)."""

    c: dict
    dtype: jnp.dtype = jnp.float32
    attention: str = "xla"

    @nn.compact
    def __call__(self, x, train):
        c = self.c
        d, p = c["embed_dim"], c["patch_size"]
        x = nn.Conv(d, (p, p), strides=(p, p), padding="VALID", dtype=self.dtype, kernel_init=_torch_default_kernel,
                    bias_init=_torch_default_bias(c["in_channels"] * p * p), name="patch")(x)
        x = x.reshape(x.shape[0], -1, d)  # row-major patches, as torch's flatten(2)
        tokens = (c["image_size"] // p) ** 2 + 1
        cls = self.param("cls_token", _normal(1e-6), (1, 1, d))
        pos = self.param("pos_embed", _normal(0.02), (1, tokens, d))
        x = jnp.concatenate([jnp.broadcast_to(cls, (x.shape[0], 1, d)), x.astype(jnp.float32)], 1) + pos
        for i in range(c["depth"]):
            x = VitBlock(c["num_heads"], c["mlp_hidden"], self.dtype, self.attention, name=f"blocks_{i}")(x)
        return _dense(c["num_classes"], self.dtype, "head")(_layer_norm(1e-6, "norm")(x)[:, 0])


class ConvBN(nn.Module):
    """A bias-free convolution with torch's padding (k // 2) and a batch norm
    (torch's momentum 0.1 is Flax's 0.9)."""

    features: int
    kernel: int
    stride: int
    dtype: jnp.dtype

    @nn.compact
    def __call__(self, x, train):
        k, pad = self.kernel, self.kernel // 2
        x = nn.Conv(self.features, (k, k), strides=(self.stride, self.stride), padding=((pad, pad), (pad, pad)),
                    use_bias=False, dtype=self.dtype, kernel_init=_he_fan_out, name="conv")(x)
        return nn.BatchNorm(use_running_average=not train, momentum=0.9, epsilon=1e-5, dtype=self.dtype,
                            name="bn")(x)


class ResBlock(nn.Module):
    kind: str
    planes: int
    stride: int
    dtype: jnp.dtype

    @nn.compact
    def __call__(self, x, train):
        if self.kind == "basic":
            convs = [(self.planes, 3, self.stride), (self.planes, 3, 1)]
            out = self.planes
        else:  # torchvision v1.5 bottleneck: the stride on the 3×3
            convs = [(self.planes, 1, 1), (self.planes, 3, self.stride), (self.planes * 4, 1, 1)]
            out = self.planes * 4
        y = x
        for i, (features, k, s) in enumerate(convs):
            y = ConvBN(features, k, s, self.dtype, name=f"convs_{i}")(y, train)
            if i != len(convs) - 1:
                y = nn.relu(y)
        if self.stride != 1 or x.shape[-1] != out:
            x = ConvBN(out, 1, self.stride, self.dtype, name="downsample")(x, train)
        return nn.relu(y + x)


class ResNet(nn.Module):
    """torchvision's ResNet (v1.5), or its small-image stem for CPU variants."""

    c: dict
    dtype: jnp.dtype = jnp.float32
    attention: str = "xla"  # unused: every model takes it

    @nn.compact
    def __call__(self, x, train):
        c = self.c
        imagenet = c["stem"] == "imagenet"
        x = nn.relu(ConvBN(c["stem_width"], 7 if imagenet else 3, 2 if imagenet else 1, self.dtype,
                           name="stem")(x, train))
        if imagenet:
            x = nn.max_pool(x, (3, 3), strides=(2, 2), padding=((1, 1), (1, 1)))
        b = 0
        for stage, (n, planes) in enumerate(zip(c["layers"], c["planes"])):
            for i in range(n):
                stride = (1 if stage == 0 else 2) if i == 0 else 1
                x = ResBlock(c["block"], planes, stride, self.dtype, name=f"blocks_{b}")(x, train)
                b += 1
        x = jnp.mean(x, axis=(1, 2))
        # nn.Linear's default init, as torchvision.
        return nn.Dense(c["num_classes"], dtype=self.dtype, kernel_init=_torch_default_kernel,
                        bias_init=_torch_default_bias(x.shape[-1]), name="fc")(x)


class BertLayer(nn.Module):
    c: dict
    dtype: jnp.dtype
    attention: str

    @nn.compact
    def __call__(self, x, train):
        b, t, d = x.shape
        heads = self.c["heads"]
        drop = nn.Dropout(0.1, deterministic=not train)  # a fresh mask at every call

        def split(name):
            return _dense(d, self.dtype, name)(x).reshape(b, t, heads, d // heads)

        ctx = _attention(split("query"), split("key"), split("value"), self.dtype, self.attention, drop)
        x = _layer_norm(1e-12, "attn_norm")(x + drop(_dense(d, self.dtype, "attn_out")(ctx.reshape(b, t, d))))
        ff = nn.gelu(_dense(self.c["intermediate"], self.dtype, "intermediate")(x), approximate=False)
        return _layer_norm(1e-12, "out_norm")(x + drop(_dense(d, self.dtype, "output")(ff)))


class Bert(nn.Module):
    """Hugging Face's BertModel (post-norm, eps 1e-12, exact GELU, dropout 0.1,
    tanh pooler) plus BertForSequenceClassification's head."""

    c: dict
    dtype: jnp.dtype = jnp.float32
    attention: str = "xla"

    @nn.compact
    def __call__(self, ids, train):
        c = self.c
        d = c["hidden"]
        drop = nn.Dropout(0.1, deterministic=not train)
        pos = jnp.arange(ids.shape[1])[None, :]
        x = nn.Embed(c["vocab_size"], d, embedding_init=_normal(0.02), name="word")(ids) \
            + nn.Embed(c["max_position"], d, embedding_init=_normal(0.02), name="position")(pos) \
            + nn.Embed(c["type_vocab"], d, embedding_init=_normal(0.02), name="token_type")(jnp.zeros_like(ids))
        x = drop(_layer_norm(1e-12, "emb_norm")(x))
        for i in range(c["layers"]):
            x = BertLayer(c, self.dtype, self.attention, name=f"layers_{i}")(x, train)
        pooled = jnp.tanh(_dense(d, self.dtype, "pooler")(x[:, 0]))
        return _dense(c["num_classes"], self.dtype, "classifier")(drop(pooled))


def _rotate_half(x):
    a, b = jnp.split(x, 2, -1)
    return jnp.concatenate([-b, a], -1)


def rotary_tables(t, head_dim, theta):
    """(cos, sin) of rotary embeddings for positions 0..t-1, (t, head_dim), in
    Hugging Face Llama's layout (the two halves of each head rotate together)."""
    inv = 1.0 / (theta ** (jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim))
    freqs = jnp.outer(jnp.arange(t, dtype=jnp.float32), inv)
    emb = jnp.concatenate([freqs, freqs], -1)
    return jnp.cos(emb), jnp.sin(emb)


def _decoder_norm(c, name):
    if c["norm"] == "layer_norm":
        return _layer_norm(1e-5, name)
    return nn.RMSNorm(epsilon=1e-5, name=name)


def _decoder_dense(features, bias, std, dtype, name):
    return nn.Dense(features, use_bias=bias, dtype=dtype, kernel_init=_normal(std), bias_init=nn.initializers.zeros,
                    name=name)


class DecoderBlock(nn.Module):
    """The PyTorch worker's DecoderBlock: pre-norm causal self-attention
    (grouped-query when kv_heads < heads; queries, keys and values from one
    fused projection) and a GELU (tanh) or SwiGLU feed-forward block (gate and
    up fused), dropout 0.1 where the config has it."""

    c: dict
    dtype: jnp.dtype
    attention: str

    @nn.compact
    def __call__(self, x, rope, train):
        c = self.c
        b, t, d = x.shape
        h, kv = c["heads"], c["kv_heads"]
        hd = d // h
        bias = c["bias"]
        # GPT-2 scales the init of the projections into the residual stream.
        out_std = 0.02 / math.sqrt(2 * c["layers"]) if c["norm"] == "layer_norm" else 0.02
        drop = nn.Dropout(0.1 if c["dropout"] else 0.0, deterministic=not train)
        qkv = _decoder_dense(d + 2 * kv * hd, bias, 0.02, self.dtype, "qkv")(_decoder_norm(c, "norm1")(x))
        q = qkv[..., :d].reshape(b, t, h, hd)
        k = qkv[..., d:d + kv * hd].reshape(b, t, kv, hd)
        v = qkv[..., d + kv * hd:].reshape(b, t, kv, hd)
        if rope is not None:
            cos, sin = (r[None, :, None, :].astype(q.dtype) for r in rope)
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
        a = _attention(q, k, v, self.dtype, self.attention, drop if c["dropout"] else None, causal=True)
        x = x + drop(_decoder_dense(d, bias, out_std, self.dtype, "o")(a.reshape(b, t, d)))
        i = c["intermediate"]
        swiglu = c["mlp"] == "swi_glu"
        y = _decoder_dense(2 * i if swiglu else i, bias, 0.02, self.dtype, "up")(_decoder_norm(c, "norm2")(x))
        if swiglu:
            gate, up = jnp.split(y, 2, -1)
            y = nn.silu(gate) * up
        else:
            y = nn.gelu(y, approximate=True)
        return x + drop(_decoder_dense(d, bias, out_std, self.dtype, "down")(y))


class Decoder(nn.Module):
    """A decoder-only language model, the PyTorch worker's Decoder: Hugging
    Face's GPT2LMHeadModel (learned positions, LayerNorm, GELU, biases, tied
    head, dropout 0.1) or LlamaForCausalLM (rotary positions, RMSNorm, SwiGLU,
    grouped-query attention, no biases) as the config says. Returns logits."""

    c: dict
    dtype: jnp.dtype = jnp.float32
    attention: str = "xla"

    @nn.compact
    def __call__(self, ids, train):
        c = self.c
        d, t = c["hidden"], ids.shape[1]
        embed = nn.Embed(c["vocab_size"], d, embedding_init=_normal(0.02), name="embed")
        x = embed(ids)  # float32, as torch's autocast leaves embeddings
        if c["positions"] == "learned":
            x = x + nn.Embed(c["max_position"], d, embedding_init=_normal(0.02), name="pos")(jnp.arange(t)[None, :])
        x = nn.Dropout(0.1 if c["dropout"] else 0.0, deterministic=not train)(x)
        rope = rotary_tables(t, d // c["heads"], float(c["rope_theta"])) if c["positions"] == "rotary" else None
        for i in range(c["layers"]):
            x = DecoderBlock(c, self.dtype, self.attention, name=f"blocks_{i}")(x, rope, train)
        x = _decoder_norm(c, "norm")(x)
        if c["tie_embeddings"]:
            # The tied head: the token embedding's transpose, in the compute dtype.
            return jnp.dot(x.astype(self.dtype), embed.embedding.astype(self.dtype).T)
        return _decoder_dense(c["vocab_size"], False, 0.02, self.dtype, "head")(x)


class EncoderLayer(nn.Module):
    """PyTorch's nn.TransformerEncoderLayer (batch_first, post-norm, ReLU,
    dropout 0.1 on the attention probabilities, after the attention and in
    and after the feed-forward block; LayerNorm eps 1e-5)."""

    c: dict
    dtype: jnp.dtype
    attention: str

    @nn.compact
    def __call__(self, x, train):
        c = self.c
        b, t, d = x.shape
        h = c["heads"]
        drop = nn.Dropout(0.1, deterministic=not train)
        qkv = _dense(3 * d, self.dtype, "in_proj")(x).reshape(b, t, 3, h, d // h)
        a = _attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], self.dtype, self.attention, drop)
        x = _layer_norm(1e-5, "norm1")(x + drop(_dense(d, self.dtype, "out_proj")(a.reshape(b, t, d))))
        ff = _dense(d, self.dtype, "linear2")(drop(nn.relu(_dense(c["intermediate"], self.dtype, "linear1")(x))))
        return _layer_norm(1e-5, "norm2")(x + drop(ff))


class FraudTransformer(nn.Module):
    """The migration seed's FraudTransformer (torch_worker.FraudTransformer):
    token and position embeddings, post-norm encoder layers, the mean over
    positions, a linear head."""

    c: dict
    dtype: jnp.dtype = jnp.float32
    attention: str = "xla"

    @nn.compact
    def __call__(self, ids, train):
        c = self.c
        d = c["hidden"]
        x = nn.Embed(c["vocab_size"], d, embedding_init=_normal(1.0), name="embedding")(ids) \
            + nn.Embed(c["max_position"], d, embedding_init=_normal(1.0), name="pos_encoder")(
                jnp.arange(ids.shape[1])[None, :])
        for i in range(c["layers"]):
            x = EncoderLayer(c, self.dtype, self.attention, name=f"layers_{i}")(x, train)
        return nn.Dense(c["num_classes"], dtype=self.dtype, kernel_init=_torch_default_kernel,
                        bias_init=_torch_default_bias(d), name="fc")(x.mean(axis=1))


def build(config, dtype=jnp.float32, attention="xla"):
    model = {"vit": Vit, "resnet": ResNet, "bert": Bert, "decoder": Decoder,
             "encoder": FraudTransformer}[config["family"]]
    return model(config, dtype, attention)


def _init_variables(model, config, key):
    """The model's variables, from a one-sample input of the run's shape."""
    if config["family"] in TOKEN_FAMILIES:
        x = jnp.zeros((1, config["seq_len"]), jnp.int32)
    else:
        x = jnp.zeros((1, config["image_size"], config["image_size"], config["in_channels"]), jnp.float32)
    return model.init(key, x, train=False)


def _size(tree):
    return sum(math.prod(leaf.shape) for leaf in jax.tree.leaves(tree))


def count_params(config):
    """Trainable parameters (the ``params`` collection; batch-norm statistics are
    not trained), from shapes alone."""
    model = build(config)
    shapes = jax.eval_shape(lambda: _init_variables(model, config, jax.random.PRNGKey(0)))
    return _size(shapes["params"])


# --- the backend --------------------------------------------------------------

def is_oom(e):
    """Whether a framework exception means out of memory."""
    text = str(e)
    return isinstance(e, MemoryError) or "RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower()


def _cross_entropy(logits, y, binary=False):
    """Per-sample loss: softmax cross-entropy, or binary cross-entropy on one
    logit (the fraud model's head)."""
    if binary:
        return optax.sigmoid_binary_cross_entropy(logits.astype(jnp.float32)[..., 0], y.astype(jnp.float32))
    return optax.softmax_cross_entropy_with_integer_labels(logits.astype(jnp.float32), y)


def _predicted(logits, binary=False):
    return (logits[..., 0] > 0).astype(jnp.int32) if binary else jnp.argmax(logits, -1)


def _start_cpu_backend(devices, cores):
    """Starts XLA's CPU backend with ``devices`` devices and ``cores`` compute threads.

    XLA's CPU client has no thread-count option: it sizes its intra-op pool
    from the cores the process may run on when the backend starts, and
    ``--xla_cpu_multi_thread_eigen=false`` no longer changes anything under
    jax 0.10's thunk runtime (measured: a jitted matmul still keeps two cores
    busy). So the affinity mask is narrowed while the backend starts, which
    sizes the pool, then widened again for every thread, so that the pool's
    threads may run on any core as PyTorch's do.
    """
    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_num_cpu_devices", devices)
    allowed = sorted(os.sched_getaffinity(0))
    if cores >= len(allowed):
        return jax.devices("cpu")
    os.sched_setaffinity(0, allowed[:cores])
    try:
        return jax.devices("cpu")
    finally:
        for tid in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(tid), allowed)
            except OSError:  # a thread that has ended since the listing
                pass


# XLA backend compilations so far, counted by a jax.monitoring listener
# (registered once, by the first backend).
_BACKEND_COMPILES = [0]
_LISTENING = [False]


def _count_compiles():
    if _LISTENING[0]:
        return
    _LISTENING[0] = True

    def on_duration(event, duration_secs, **_):
        if event == "/jax/core/compile/backend_compile_duration":
            _BACKEND_COMPILES[0] += 1

    jax.monitoring.register_event_duration_secs_listener(on_duration)


class JaxBackend(Backend):
    worker = "jax"
    framework = "jax"
    framework_version = jax.__version__

    def __init__(self, plan):
        self.plan = plan
        self.world_size = plan.devices * plan.nodes
        self.multi = plan.nodes > 1
        if self.multi:
            # One process per node (srun), joined by jax.distributed; on the
            # CPU, cross-process collectives through gloo.
            coordinator = os.environ.get("TRAINBENCH_COORDINATOR")
            if not coordinator:
                raise unsupported(f"nodes = {plan.nodes}: no coordinator address (the worker launches itself "
                                  "under srun inside a Slurm allocation)", "nodes")
            if not plan.is_cuda:
                jax.config.update("jax_cpu_collectives_implementation", "gloo")
            self.rank = int(os.environ.get("TRAINBENCH_NODE_RANK", os.environ.get("SLURM_PROCID", "0")))
            if not plan.is_cuda:
                jax.config.update("jax_platforms", "cpu")
                jax.config.update("jax_num_cpu_devices", plan.devices)
            jax.distributed.initialize(coordinator_address=coordinator, num_processes=plan.nodes,
                                       process_id=self.rank)
        _count_compiles()
        if self.multi:
            # Every process's devices, in process order: the mesh spans them all.
            self.devices = jax.devices("gpu" if plan.is_cuda else "cpu")
            if len(self.devices) != self.world_size:
                raise unsupported(f"nodes = {plan.nodes} × devices = {plan.devices}: JAX sees {len(self.devices)} "
                                  "devices over its processes", "devices")
        elif plan.is_cuda:
            # On a GPU, XLA's host threads only launch work: they are left as JAX starts them.
            try:
                gpus = jax.devices("gpu")
            except RuntimeError as e:
                raise unsupported(f"device = {plan.device}: this JAX ({jax.__version__}) sees no CUDA device ({e})",
                                  "device") from e
            self.devices = gpus[plan.cuda_index:plan.cuda_index + plan.devices]
            if len(self.devices) < plan.devices:
                raise unsupported(f"devices = {plan.devices} from {plan.device}: JAX sees {len(gpus)} CUDA device(s)",
                                  "devices")
        else:
            # One process drives every CPU device: it gets the cores that as many
            # PyTorch processes of `threads` threads each would use.
            self.devices = _start_cpu_backend(plan.devices, plan.threads() * plan.devices)[:plan.devices]
        self.mesh = Mesh(np.array(self.devices), ("data",))
        self.replicated = NamedSharding(self.mesh, P())
        self.batch_sharding = NamedSharding(self.mesh, P("data"))
        self._precision(plan)
        self.attention, self.attention_text = attention_choice(plan.config, self.dtype, plan.is_cuda)
        self.binary = classification_loss_kind(plan.config) == "binary"
        self.model = build(plan.config, self.dtype, self.attention)
        # AdamW as optax composes it (scale_by_adam, add_decayed_weights), the
        # step's learning rate applied last: the studio's schedule comes with
        # each step (as torch's param_groups), without inject_hyperparams'
        # extra state and copies.
        self.tx = optax.chain(optax.scale_by_adam(b1=ADAMW_BETAS[0], b2=ADAMW_BETAS[1], eps=ADAMW_EPS),
                              optax.add_decayed_weights(plan.weight_decay))
        try:
            self.state = jax.jit(self._init_state, out_shardings=self.replicated)()
            jax.block_until_ready(self.state)
        except Exception as e:
            if is_oom(e):
                raise WorkerError("oom", f"out of memory building {plan.model}: {first_line(e)}") from e
            raise
        self.params = _size(self.state["params"])
        # The step is compiled at the first call, on the real arguments (see step()).
        self.jitted = jax.jit(self._train_step,
                              in_shardings=(self.replicated, self.replicated, self.replicated, self.batch_sharding,
                                            self.replicated),
                              out_shardings=(self.replicated, self.replicated), donate_argnums=0)
        self.compiled = None
        self.compile_time = None
        self.loss = None

    def _precision(self, plan):
        p = plan.precision
        cuda = plan.is_cuda
        # The run's first GPU decides; bfloat16 by the capability (JAX gives no verdict of its own).
        check_precision(p, cuda,
                        capability_major=int(self.devices[0].compute_capability.split(".")[0]) if cuda else None)
        # JAX's default precision lets XLA use TF32 for float32 matmuls and
        # convolutions on Ampere and newer GPUs: fp32 asks for full float32,
        # tf32 for TF32. The setting is for 32-bit inputs only, and under AMP
        # every matmul and convolution takes 16-bit inputs.
        if cuda and p in ("fp32", "tf32"):
            jax.config.update("jax_default_matmul_precision", "highest" if p == "fp32" else "tensorfloat32")
        self.dtype = {"amp-bf16": jnp.bfloat16, "amp-fp16": jnp.float16}.get(p, jnp.float32)
        self.loss_scaling = p == "amp-fp16"
        if p == "fp32":
            self.text = "fp32 everywhere" + ("; TF32 tensor cores off (matmul precision highest)" if cuda else "")
        elif p == "tf32":
            self.text = "fp32 storage; TF32 matmuls and convolutions (jax_default_matmul_precision=tensorfloat32)"
        elif p == "amp-bf16":
            self.text = ("Flax modules with dtype bfloat16 (matmuls, convolutions); fp32 master weights, "
                         "normalisation statistics, softmax and loss; no loss scaling")
        else:
            self.text = ("Flax modules with dtype float16 (matmuls, convolutions); fp32 master weights, "
                         "normalisation statistics, softmax and loss; dynamic loss scaling as torch's GradScaler")

    def _init_state(self):
        """Everything the step carries: parameters, batch-norm statistics,
        optimizer state, the step number (for dropout) and the fp16 loss scale."""
        variables = _init_variables(self.model, self.plan.config, jax.random.PRNGKey(self.plan.seed))
        params = variables.pop("params")
        state = {"params": params, "model_state": variables, "opt": self.tx.init(params),
                 "step": jnp.zeros((), jnp.int32)}
        if self.loss_scaling:
            state["scale"] = jnp.asarray(LOSS_SCALE_INIT, jnp.float32)
            state["good_steps"] = jnp.zeros((), jnp.int32)
        return state

    def _train_step(self, state, x_all, y_all, idx, lr):
        """One AdamW step on the global batch ``idx``, gathered from the
        device-resident training set and sharded over the mesh. Batch norms see
        the whole global batch (as SyncBatchNorm would, where DDP's see each
        process's share), since a mean over the sharded axis is a mean over
        every device's samples."""
        x = jax.lax.with_sharding_constraint(jnp.take(x_all, idx, axis=0), self.batch_sharding)
        y = jax.lax.with_sharding_constraint(jnp.take(y_all, idx, axis=0), self.batch_sharding)
        return self._batch_step(state, x, y, lr)

    def _batch_step(self, state, x, y, lr):
        """One AdamW step on a global batch already sharded over the mesh
        (a streamed source's decoded batch comes here directly)."""
        x, y = inputs_and_targets(self.plan, x, y)
        step = state["step"] + 1
        rngs = {"dropout": jax.random.fold_in(jax.random.PRNGKey(self.plan.seed), step)}
        scale = state["scale"] if self.loss_scaling else 1.0

        def loss_fn(params):
            logits, updated = self.model.apply({"params": params, **state["model_state"]}, x, train=True, rngs=rngs,
                                               mutable=["batch_stats"])
            loss = _cross_entropy(logits, y, self.binary).mean()
            return loss * scale, (loss, updated)

        grads, (loss, model_state) = jax.grad(loss_fn, has_aux=True)(state["params"])
        opt = state["opt"]

        def apply(grads):
            # The named scope only labels the HLO (the operator profile's "optimizer").
            with jax.named_scope("trainbench.optimizer"):
                updates, new_opt = self.tx.update(grads, opt, state["params"])
                updates = jax.tree.map(lambda u: (-lr * u).astype(u.dtype), updates)
                return optax.apply_updates(state["params"], updates), new_opt

        new = {**state, "model_state": model_state, "step": step}
        if self.loss_scaling:
            # torch's GradScaler: unscale, skip the update on inf/nan and halve
            # the scale; double it after LOSS_SCALE_GROWTH_INTERVAL finite steps.
            grads = jax.tree.map(lambda g: g / scale, grads)
            finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(g)) for g in jax.tree.leaves(grads)]))
            new["params"], new["opt"] = jax.lax.cond(finite, apply, lambda _: (state["params"], opt), grads)
            good = jnp.where(finite, state["good_steps"] + 1, 0)
            grow = good == LOSS_SCALE_GROWTH_INTERVAL
            new["scale"] = jnp.where(finite, jnp.where(grow, scale * 2.0, scale), scale * 0.5)
            new["good_steps"] = jnp.where(grow, 0, good)
        else:
            new["params"], new["opt"] = apply(grads)
        return new, loss

    def _evaluate(self, variables, xs, ys, weights):
        """(correct, summed loss) over batches xs[i] (padding weighted 0)."""

        def batch(totals, b):
            x, y, w = (jax.lax.with_sharding_constraint(a, self.batch_sharding) for a in b)
            x, y = inputs_and_targets(self.plan, x, y)
            if y.ndim > w.ndim:
                # Every next-token prediction of a sequence weighs as it does (padding 0).
                w = jnp.broadcast_to(w[:, None], y.shape)
            logits = self.model.apply(variables, x, train=False).astype(jnp.float32)
            correct = jnp.sum((_predicted(logits, self.binary) == y) * w)
            return (totals[0] + correct, totals[1] + jnp.sum(_cross_entropy(logits, y, self.binary) * w)), None

        zero = jnp.zeros((), jnp.float32)
        return jax.lax.scan(batch, (zero, zero), (xs, ys, weights))[0]

    def libraries(self):
        libs = [("python", sys.version.split()[0]), ("jaxlib", jaxlib.__version__), ("flax", flax.__version__),
                ("optax", optax.__version__)]
        if self.plan.is_cuda:
            libs.append(("xla platform", self.devices[0].client.platform_version))
        return libs

    def devices_visible(self):
        # A CPU run starts only the CPU backend (the GPU one would reserve most
        # of every GPU's memory), so it lists no GPUs.
        seen = [{"id": "cpu", "name": cpu_name()}]
        if self.plan.is_cuda:
            seen += [{"id": f"cuda:{d.id}", "name": d.device_kind} for d in jax.devices("gpu")]
        return seen

    def device_info(self):
        if self.plan.is_cuda:
            d = self.devices[0]
            return {"id": f"cuda:{d.id}", "name": d.device_kind}
        return {"id": "cpu", "name": cpu_name()}

    def param_count(self):
        return self.params

    def precision_in_effect(self):
        return self.text

    def execution(self):
        mode = "jax.jit (XLA)"
        if self.multi:
            mode += (f"; data parallel over {self.world_size} devices of {self.plan.nodes} processes "
                     f"(jax.distributed, one per node{'' if self.plan.is_cuda else '; gloo collectives on the CPU'})")
        elif self.plan.devices > 1:
            mode += f"; data parallel over {self.plan.devices} devices (NamedSharding)"
        if self.attention_text:
            mode += f"; {self.attention_text}"
        return mode

    def _put(self, a, sharding):
        """A host array as a jax.Array with ``sharding``: device_put in one
        process; across processes, each gives the shards its devices hold
        (every process holds the same host data)."""
        if not self.multi:
            return jax.device_put(a, sharding)
        return jax.make_array_from_callback(a.shape, sharding, lambda index: a[index])

    def set_data(self, data):
        if data.streamed and self.multi:
            raise unsupported("data = folder with nodes > 1 is not built for JAX yet: expected 1 node", "nodes")
        if data.streamed:
            self._set_stream(data)
            return
        x, y = data.train
        if self.plan.family in TOKEN_FAMILIES:
            x = x.astype(np.int32)
        else:
            x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))  # NCHW → NHWC
        # Replicated: every device gathers its share of each batch locally.
        self.x = self._put(x, self.replicated)
        self.y = self._put(y.astype(np.int32), self.replicated)
        if data.eval is not None:
            self._set_eval(*data.eval)

    def _set_stream(self, data):
        """An image folder through a NumPy pipeline: ``loader_workers``
        threads decode and augment whole global batches with Pillow (NHWC),
        two per thread ahead; each batch is put on the mesh sharded by
        samples, and the step takes it as it is."""
        from . import images

        n = int(self.plan.loader_workers)
        size = int(self.plan.config["image_size"])
        files, labels = data.train
        seed = self.plan.seed

        def make(order, epoch):
            x, y = images.train_batch(files, labels, order, size, seed, epoch, channels_last=True)
            return HostBatch(x, y.astype(np.int32))

        self.jitted = jax.jit(self._batch_step,
                              in_shardings=(self.replicated, self.batch_sharding, self.batch_sharding,
                                            self.replicated),
                              out_shardings=(self.replicated, self.replicated), donate_argnums=0)
        where = (f"{n} decoding thread{'s' if n > 1 else ''}, 2 batches ahead each" if n else
                 "decoded on the training thread, nothing ahead")
        data.attach(images.ThreadLoader(make, data.orders(), n),
                    f"NumPy pipeline ({where}); Pillow decode, RandomResizedCrop, flip, normalise; "
                    "jax.device_put sharded over the mesh")
        if data.eval is not None:
            self._set_eval(*data.eval)

    def _set_eval(self, x, y):
        """The held-out split in batches of EVAL_BATCH (fewer if the split is
        smaller; a multiple of the devices), padded with weight-0 samples and
        sharded over the mesh, so one compiled scan evaluates it all."""
        n = len(y)
        devices = len(self.devices)
        b = -(-min(eval_batch(self.plan), n) // devices) * devices
        batches = -(-n // b)
        pad = batches * b - n
        if self.plan.family not in TOKEN_FAMILIES:
            x = x.transpose(0, 2, 3, 1)
        x = np.concatenate([x, np.zeros((pad,) + x.shape[1:], x.dtype)])
        y = np.concatenate([y.astype(np.int32), np.zeros(pad, np.int32)])
        w = np.concatenate([np.ones(n, np.float32), np.zeros(pad, np.float32)])
        sharding = NamedSharding(self.mesh, P(None, "data"))
        self.eval_n = n

        self.ex, self.ey, self.ew = (self._put(a.reshape((batches, b) + a.shape[1:]), sharding) for a in (x, y, w))
        self.eval_fn = jax.jit(self._evaluate, in_shardings=(self.replicated, sharding, sharding, sharding),
                               out_shardings=self.replicated)

    def step(self, idx, lr):
        lr = np.float32(lr)
        if isinstance(idx, HostBatch):
            # The decoded batch onto the mesh, each device its share of samples.
            args = (jax.device_put(idx.x, self.batch_sharding), jax.device_put(idx.y, self.batch_sharding), lr)
            shape = idx.x.shape
        else:
            idx = idx.astype(np.int32)
            args = (self.x, self.y, self._put(idx, self.batch_sharding) if self.multi else idx, lr)
            shape = idx.shape
        try:
            if self.compiled is None:
                start = time.perf_counter()
                self.compiled = self.jitted.lower(self.state, *args).compile()
                self.compile_time = time.perf_counter() - start
                self.executables = {shape: self.compiled}
            elif shape not in self.executables:
                # A new batch shape: compile for it, as jax.jit does (the
                # jax.monitoring listener counts it: the recompile badge).
                self.executables[shape] = self.jitted.lower(self.state, *args).compile()
            executable = self.executables[shape]
            self.state, self.loss = executable(self.state, *args)
        except Exception as e:
            if is_oom(e):
                raise WorkerError("oom", f"out of memory in a training step of {self.plan.model} "
                                         f"(batch {self.plan.batch_size} per device): {first_line(e)}") from e
            raise
        return self.loss

    def sync(self):
        jax.block_until_ready((self.state, self.loss))

    def loss_values(self, handles):
        return [float(v) for v in jax.device_get(handles)]

    def evaluate(self):
        variables = {"params": self.state["params"], **self.state["model_state"]}
        correct, total_loss = jax.device_get(self.eval_fn(variables, self.ex, self.ey, self.ew))
        predictions = self.eval_n * predictions_per_sample(self.plan)
        return float(correct) / predictions, float(total_loss) / predictions, self.eval_n

    def compile_s(self):
        return self.compile_time

    def fused(self):
        first = "forward" if self.plan.data == "folder" else "batch gather, forward"
        text = f"{first}, backward and optimizer update run as one jax.jit XLA executable"
        if self.plan.devices > 1:
            text += ", with the gradient all-reduce across devices inside"
        return text

    def communication(self):
        if self.plan.devices == 1:
            return None
        return "XLA inserts the gradient all-reduce into the step's executable: communication is part of the fused step"

    def compile_count(self):
        return _BACKEND_COMPILES[0]

    def compile_source(self):
        return "XLA backend compilations seen by jax.monitoring while the training step ran"

    def profile(self, run_step, steps):
        import glob
        import gzip
        import json
        import tempfile

        from . import profiling

        run_step()  # one step outside the profiler
        self.sync()
        categories = profiling.hlo_categories(self.compiled.as_text())
        with tempfile.TemporaryDirectory(prefix="trainbench-profile-") as d:
            with jax.profiler.trace(d, create_perfetto_trace=True):
                with jax.profiler.TraceAnnotation(profiling.SPAN):
                    for _ in range(steps):
                        run_step()
                    self.sync()
            files = glob.glob(os.path.join(d, "**", "perfetto_trace.json.gz"), recursive=True)
            if not files:
                return {"not_measured": "jax.profiler wrote no perfetto_trace.json.gz"}
            with gzip.open(files[0]) as f:
                trace = json.load(f)
        events, timeline, span_s = profiling.xla_events(trace, categories)
        what = ("XLA operators on the GPU streams" if timeline == "device" else
                "XLA operators on the host's XLA threads (thunks of the jitted step)")
        what += ", categorised from the compiled HLO (a fusion takes the strongest operation inside it)"
        return profiling.reduce(events, span_s, steps, f"jax.profiler (JAX {jax.__version__})", timeline, what)

    def loss_scale(self):
        return float(self.state["scale"]) if self.loss_scaling else None

    def max_over_ranks(self, n):
        if not self.multi:
            return n
        from jax.experimental import multihost_utils

        return int(np.max(multihost_utils.process_allgather(np.asarray(n, np.int64))))

    def finish(self):
        if self.multi:
            from jax.experimental import multihost_utils

            multihost_utils.sync_global_devices("trainbench finish")
            jax.distributed.shutdown()

    def memory_events(self):
        # XLA's BFC allocator: the peak in use, and the peak of the pool it holds
        # (torch's "reserved"; JAX preallocates 75 % of the GPU's memory by default).
        events = []
        for d in self.devices if self.plan.is_cuda else []:
            stats = d.memory_stats() or {}
            if "peak_bytes_in_use" in stats:
                events.append({"device": f"cuda:{d.id}", "source": "allocator", "peak_bytes": stats["peak_bytes_in_use"],
                               "reserved_peak_bytes": stats.get("peak_pool_bytes")})
        return events + super().memory_events()


def info():
    # Listing GPUs starts the GPU backend: without preallocation it takes no
    # more than a CUDA context from a run going on beside it.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        gpus = [d.device_kind for d in jax.devices("gpu")]
    except RuntimeError:
        gpus = []
    return {"version": jax.__version__, "gpus": gpus,
            "libraries": {"jaxlib": jaxlib.__version__, "flax": flax.__version__, "optax": optax.__version__}}


Backend = JaxBackend
