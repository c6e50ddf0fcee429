"""The JAX worker's models: the PyTorch worker's (torch_models.py) written
for Flax (linen) at its defaults, images in NHWC, the same parameter counts,
and the attention chosen for the device.
"""

import math

import flax.linen as nn
import jax
import jax.numpy as jnp

from .protocol import first_line
from .traits import Attention

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
            return nn.dot_product_attention(
                q,
                k,
                v,
                mask=mask,
                dtype=dtype,
                deterministic=not drops,
                dropout_rng=dropout.make_rng("dropout") if drops else None,
                dropout_rate=dropout.rate if drops else 0.0,
                force_fp32_for_softmax=True,
            )
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


def attention_choice(attention: Attention | None, dtype, cuda):
    """(implementation, what the run's ``execution`` says) for the model's
    attention: cuDNN's fused attention on a GPU when it compiles for the
    model's shape and compute dtype (bf16/fp16; a short probe here), else XLA."""
    if attention is None:
        return "xla", None
    if not cuda:
        # Flax's own attention (einsum, softmax, einsum) is 7-12 % faster than
        # jax.nn.dot_product_attention's XLA path on a CPU, and it drops
        # attention probabilities as Flax users train BERT and GPT-2.
        why = ", with its attention dropout while training" if attention.dropout else ""
        return "flax", (
            "attention: flax.linen.dot_product_attention, Flax's own (einsum · softmax in float32 · "
            f"einsum, in XLA; CPU{why})"
        )
    if attention.dropout:
        return "xla", (
            "attention: softmax(QKᵀ/√d)·V written out in XLA (the model drops attention probabilities "
            "while training; jax.nn.dot_product_attention has no dropout)"
        )
    if dtype not in (jnp.bfloat16, jnp.float16):
        return "xla", "attention: jax.nn.dot_product_attention, XLA implementation (cuDNN's takes bf16/fp16 only)"
    t, h, kv, hd = attention.tokens, attention.heads, attention.kv_heads, attention.head_dim
    q = jax.ShapeDtypeStruct((1, t, h, hd), dtype)
    k = jax.ShapeDtypeStruct((1, t, kv, hd), dtype)
    causal = attention.causal
    try:
        f = jax.jit(
            jax.grad(
                lambda q, k, v: (
                    jax.nn.dot_product_attention(q, k, v, is_causal=causal, implementation="cudnn")
                    .astype(jnp.float32)
                    .sum()
                ),
                argnums=(0, 1, 2),
            )
        )
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
        x = nn.Conv(
            d,
            (p, p),
            strides=(p, p),
            padding="VALID",
            dtype=self.dtype,
            kernel_init=_torch_default_kernel,
            bias_init=_torch_default_bias(c["in_channels"] * p * p),
            name="patch",
        )(x)
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
        x = nn.Conv(
            self.features,
            (k, k),
            strides=(self.stride, self.stride),
            padding=((pad, pad), (pad, pad)),
            use_bias=False,
            dtype=self.dtype,
            kernel_init=_he_fan_out,
            name="conv",
        )(x)
        return nn.BatchNorm(use_running_average=not train, momentum=0.9, epsilon=1e-5, dtype=self.dtype, name="bn")(x)


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
        x = nn.relu(
            ConvBN(c["stem_width"], 7 if imagenet else 3, 2 if imagenet else 1, self.dtype, name="stem")(x, train)
        )
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
        return nn.Dense(
            c["num_classes"],
            dtype=self.dtype,
            kernel_init=_torch_default_kernel,
            bias_init=_torch_default_bias(x.shape[-1]),
            name="fc",
        )(x)


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
        x = (
            nn.Embed(c["vocab_size"], d, embedding_init=_normal(0.02), name="word")(ids)
            + nn.Embed(c["max_position"], d, embedding_init=_normal(0.02), name="position")(pos)
            + nn.Embed(c["type_vocab"], d, embedding_init=_normal(0.02), name="token_type")(jnp.zeros_like(ids))
        )
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
    return nn.Dense(
        features, use_bias=bias, dtype=dtype, kernel_init=_normal(std), bias_init=nn.initializers.zeros, name=name
    )


class DecoderBlock(nn.Module):
    """The PyTorch worker's DecoderBlock: pre-norm causal self-attention
    (grouped-query when kv_heads < heads; queries, keys and values each from
    its own ``nn.DenseGeneral`` onto the heads, as Flax's attention builds
    them: 3 % faster on a CPU than one fused projection cut in three) and a
    GELU (tanh) or SwiGLU feed-forward block (gate and up fused), dropout 0.1
    where the config has it."""

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
        y = _decoder_norm(c, "norm1")(x)

        def proj(n, name):
            return nn.DenseGeneral(
                (n, hd),
                use_bias=bias,
                dtype=self.dtype,
                kernel_init=_normal(0.02),
                bias_init=nn.initializers.zeros,
                name=name,
            )(y)

        q, k, v = proj(h, "query"), proj(kv, "key"), proj(kv, "value")
        if rope is not None:
            cos, sin = (r[None, :, None, :].astype(q.dtype) for r in rope)
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
        a = _attention(q, k, v, self.dtype, self.attention, drop if c["dropout"] else None, causal=True)
        x = x + drop(
            nn.DenseGeneral(
                d,
                axis=(-2, -1),
                use_bias=bias,
                dtype=self.dtype,
                kernel_init=_normal(out_std),
                bias_init=nn.initializers.zeros,
                name="o",
            )(a)
        )
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
    """The fraud-detection transformer (torch_models.FraudTransformer):
    token and position embeddings, post-norm encoder layers, the mean over
    positions, a linear head."""

    c: dict
    dtype: jnp.dtype = jnp.float32
    attention: str = "xla"

    @nn.compact
    def __call__(self, ids, train):
        c = self.c
        d = c["hidden"]
        x = nn.Embed(c["vocab_size"], d, embedding_init=_normal(1.0), name="embedding")(ids) + nn.Embed(
            c["max_position"], d, embedding_init=_normal(1.0), name="pos_encoder"
        )(jnp.arange(ids.shape[1])[None, :])
        for i in range(c["layers"]):
            x = EncoderLayer(c, self.dtype, self.attention, name=f"layers_{i}")(x, train)
        return nn.Dense(
            c["num_classes"],
            dtype=self.dtype,
            kernel_init=_torch_default_kernel,
            bias_init=_torch_default_bias(d),
            name="fc",
        )(x.mean(axis=1))


def build(config, dtype=jnp.float32, attention="xla"):
    model = {"vit": Vit, "resnet": ResNet, "bert": Bert, "decoder": Decoder, "encoder": FraudTransformer}[
        config["family"]
    ]
    return model(config, dtype, attention)


def _init_variables(model, config, key):
    """The model's variables, from a one-sample input of the run's shape."""
    # Token ids unless the model's configuration has an image size (every
    # image model's has; a person's model takes tokens when the run gives none).
    if not config.get("image_size"):
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
