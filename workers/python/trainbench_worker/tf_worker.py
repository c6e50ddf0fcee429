"""The TensorFlow worker: Keras 3 models trained in a ``tf.function`` graph or
``tf.function(jit_compile=True)`` (XLA), fp32 / tf32 / Keras mixed precision,
and data parallelism with ``tf.distribute.MirroredStrategy`` in one process
(logical CPU devices on the CPU, NCCL between GPUs).

The models are the PyTorch worker's (torch_worker.py), written as Keras layers
and laid out channels-last (NHWC): timm's VisionTransformer, torchvision's ResNet
v1.5, Hugging Face's BertModel with the sequence-classification head. Parameter
counts must equal the catalogue's; :func:`count_params` builds them in a
``keras.StatelessScope`` and leaves their variables uninitialised, so even
ViT-G is counted without allocating it.
"""
import math
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
from keras import layers  # noqa: E402

from .harness import (ADAMW_BETAS, ADAMW_EPS, TOKEN_FAMILIES, Backend, check_precision,  # noqa: E402
                      classification_loss_kind, cpu_name, eval_batch, inputs_and_targets, predictions_per_sample)
from .images import HostBatch  # noqa: E402
from .protocol import WorkerError, first_line, unsupported  # noqa: E402


# --- models -----------------------------------------------------------------

def _normal(std):
    return keras.initializers.RandomNormal(stddev=std)


def _torch_default(fan_in):
    """nn.Linear's and nn.Conv2d's default initialisation of weight and bias."""
    bound = 1.0 / math.sqrt(fan_in)
    return keras.initializers.RandomUniform(-bound, bound)


def _dense(units, std=0.02):
    return layers.Dense(units, kernel_initializer=_normal(std), bias_initializer="zeros")


def _attention(q, k, v, dropout=None, causal=False):
    """softmax(q kᵀ / √d) v over (batch, heads, tokens, head_dim), keys and
    values possibly with fewer heads (grouped-query attention), with optional
    dropout on the attention probabilities and a causal mask. Written out:
    TensorFlow has no fused attention kernel (Keras's ``dot_product_attention``
    composes the same ops on this backend and refuses ``flash_attention``).
    The name scope only labels the graph's ops (the operator profile's
    "attention")."""
    with tf.name_scope("trainbench.attention"):
        groups = q.shape[1] // k.shape[1]
        if groups > 1:
            k, v = tf.repeat(k, groups, axis=1), tf.repeat(v, groups, axis=1)
        q = q * (1.0 / math.sqrt(q.shape[-1]))
        logits = tf.matmul(q, k, transpose_b=True)
        if causal:
            t = tf.shape(logits)[-1]
            keep = tf.linalg.band_part(tf.ones((t, t), tf.bool), -1, 0)
            logits = tf.where(keep, logits, tf.cast(logits.dtype.min, logits.dtype))
        probs = tf.nn.softmax(logits, axis=-1)
        if dropout is not None:
            probs = dropout(probs)
        return tf.matmul(probs, v)


def _gelu(x):
    return tf.nn.gelu(x, approximate=False)


class KerasAttention(layers.MultiHeadAttention):
    """Keras' own multi-head attention, as Keras users build a ViT (separate
    query, key, value and output projections: the same parameters as one
    fused qkv projection); its softmax(QKᵀ/√d)·V named for the operator
    profile's "attention", the projections staying matmuls."""

    def _compute_attention(self, *args, **kwargs):
        with tf.name_scope("trainbench.attention"):
            return super()._compute_attention(*args, **kwargs)


class VitBlock(layers.Layer):
    def __init__(self, d, heads, mlp, **kwargs):
        super().__init__(**kwargs)
        self.d, self.heads, self.mlp = d, heads, mlp
        self.norm1 = layers.LayerNormalization(epsilon=1e-6)
        self.attn = KerasAttention(heads, d // heads, kernel_initializer=_normal(0.02), bias_initializer="zeros")
        self.norm2 = layers.LayerNormalization(epsilon=1e-6)
        self.fc1 = _dense(mlp)
        self.fc2 = _dense(d)

    def build(self, input_shape):
        for layer in (self.norm1, self.norm2, self.fc1):
            layer.build((None, self.d))
        self.attn.build((None, input_shape[1], self.d), (None, input_shape[1], self.d))
        self.fc2.build((None, self.mlp))

    def call(self, x):
        y = self.norm1(x)
        x = x + self.attn(y, y)
        return x + self.fc2(_gelu(self.fc1(self.norm2(x))))


class Vit(keras.Model):
    """timm's VisionTransformer at its defaults (class token, learned positions,
    pre-norm blocks, LayerNorm eps 1e-6, exact GELU, head on the class token)."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        d, p = c["embed_dim"], c["patch_size"]
        fan_in = c["in_channels"] * p * p
        self.patch = layers.Conv2D(d, p, strides=p, padding="valid", kernel_initializer=_torch_default(fan_in),
                                   bias_initializer=_torch_default(fan_in))
        self.tokens = (c["image_size"] // p) ** 2 + 1
        self.blocks = [VitBlock(d, c["num_heads"], c["mlp_hidden"]) for _ in range(c["depth"])]
        self.norm = layers.LayerNormalization(epsilon=1e-6)
        self.head = _dense(c["num_classes"])

    def build(self, input_shape):
        d = self.c["embed_dim"]
        self.patch.build((None, None, None, self.c["in_channels"]))
        self.cls_token = self.add_weight(shape=(1, 1, d), initializer=_normal(1e-6), name="cls_token")
        self.pos_embed = self.add_weight(shape=(1, self.tokens, d), initializer=_normal(0.02), name="pos_embed")
        for b in self.blocks:
            b.build((None, self.tokens, d))
        self.norm.build((None, d))
        self.head.build((None, d))

    def call(self, x):
        d = self.c["embed_dim"]
        x = tf.reshape(self.patch(x), (-1, self.tokens - 1, d))  # row-major patches, as torch's flatten(2)
        cls = tf.broadcast_to(self.cls_token, (tf.shape(x)[0], 1, d))
        x = tf.concat([cls, x], 1) + self.pos_embed
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x)[:, 0])


class ConvBn(layers.Layer):
    """torch's Conv2d(k, stride, padding k // 2, bias=False) + BatchNorm2d. A
    strided convolution pads explicitly: TensorFlow's "same" would pad
    asymmetrically and shift the output grid against torch's."""

    def __init__(self, out, k, stride, **kwargs):
        super().__init__(**kwargs)
        self.out = out
        self.pad = layers.ZeroPadding2D(k // 2) if stride > 1 and k > 1 else None
        self.conv = layers.Conv2D(
            out, k, strides=stride, padding="same" if self.pad is None else "valid", use_bias=False,
            kernel_initializer=keras.initializers.VarianceScaling(2.0, "fan_out", "untruncated_normal"))
        self.bn = layers.BatchNormalization(momentum=0.9, epsilon=1e-5)  # torch's momentum 0.1

    def build(self, input_shape):
        self.conv.build(input_shape)
        self.bn.build((None, None, None, self.out))

    def call(self, x):
        if self.pad is not None:
            x = self.pad(x)
        return self.bn(self.conv(x))


class ResBlock(layers.Layer):
    def __init__(self, kind, inp, planes, stride, **kwargs):
        super().__init__(**kwargs)
        if kind == "basic":
            self.convs = [ConvBn(planes, 3, stride), ConvBn(planes, 3, 1)]
            out = planes
        else:  # torchvision v1.5 bottleneck: the stride on the 3×3
            self.convs = [ConvBn(planes, 1, 1), ConvBn(planes, 3, stride), ConvBn(planes * 4, 1, 1)]
            out = planes * 4
        self.inp = inp
        self.downsample = ConvBn(out, 1, stride) if stride != 1 or inp != out else None

    def build(self, input_shape):
        width = self.inp
        for c in self.convs:
            c.build((None, None, None, width))
            width = c.out
        if self.downsample is not None:
            self.downsample.build((None, None, None, self.inp))

    def call(self, x):
        y = x
        for i, c in enumerate(self.convs):
            y = c(y)
            if i != len(self.convs) - 1:
                y = tf.nn.relu(y)
        return tf.nn.relu(y + (x if self.downsample is None else self.downsample(x)))


class ResNet(keras.Model):
    """torchvision's ResNet (v1.5), or its small-image stem for CPU variants."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        imagenet = c["stem"] == "imagenet"
        self.stem = ConvBn(c["stem_width"], 7 if imagenet else 3, 2 if imagenet else 1)
        # Max pool 3/2 with padding 1: zeros pad as torch's -inf would, since the
        # input is a ReLU output.
        self.pool = [layers.ZeroPadding2D(1), layers.MaxPooling2D(3, 2)] if imagenet else []
        self.blocks, inp = [], c["stem_width"]
        expansion = 1 if c["block"] == "basic" else 4
        for stage, (n, planes) in enumerate(zip(c["layers"], c["planes"])):
            for b in range(n):
                self.blocks.append(ResBlock(c["block"], inp, planes, (1 if stage == 0 else 2) if b == 0 else 1))
                inp = planes * expansion
        self.width = inp
        self.fc = layers.Dense(c["num_classes"], kernel_initializer=_torch_default(inp),
                               bias_initializer=_torch_default(inp))  # nn.Linear's default init, as torchvision

    def build(self, input_shape):
        self.stem.build((None, None, None, self.c["in_channels"]))
        for b in self.blocks:
            b.build((None, None, None, b.inp))
        self.fc.build((None, self.width))

    def call(self, x):
        x = tf.nn.relu(self.stem(x))
        for layer in self.pool:
            x = layer(x)
        for b in self.blocks:
            x = b(x)
        return self.fc(tf.reduce_mean(x, axis=(1, 2)))


class BertLayer(layers.Layer):
    """Hugging Face's BertLayer as a Keras user builds it: Keras'
    ``layers.MultiHeadAttention`` (query, key, value and output projections,
    dropout 0.1 on the attention probabilities), then post-norm residuals."""

    def __init__(self, c, **kwargs):
        super().__init__(**kwargs)
        d = c["hidden"]
        self.d, self.heads, self.inter = d, c["heads"], c["intermediate"]
        self.attn = KerasAttention(self.heads, d // self.heads, dropout=0.1, kernel_initializer=_normal(0.02),
                                   bias_initializer="zeros")
        self.attn_norm = layers.LayerNormalization(epsilon=1e-12)
        self.intermediate = _dense(c["intermediate"])
        self.output_dense = _dense(d)
        self.out_norm = layers.LayerNormalization(epsilon=1e-12)
        self.dropout = layers.Dropout(0.1)

    def build(self, input_shape):
        for layer in (self.attn_norm, self.intermediate, self.out_norm):
            layer.build((None, self.d))
        self.attn.build((None, None, self.d), (None, None, self.d))
        self.output_dense.build((None, self.inter))

    def call(self, x):
        x = self.attn_norm(x + self.dropout(self.attn(x, x)))
        ff = self.dropout(self.output_dense(_gelu(self.intermediate(x))))
        return self.out_norm(x + ff)


class Bert(keras.Model):
    """Hugging Face's BertModel (post-norm, eps 1e-12, exact GELU, dropout 0.1,
    tanh pooler) plus BertForSequenceClassification's head."""

    def __init__(self, c):
        super().__init__()
        d = c["hidden"]
        self.d = d
        self.word = layers.Embedding(c["vocab_size"], d, embeddings_initializer=_normal(0.02))
        self.position = layers.Embedding(c["max_position"], d, embeddings_initializer=_normal(0.02))
        self.token_type = layers.Embedding(c["type_vocab"], d, embeddings_initializer=_normal(0.02))
        self.emb_norm = layers.LayerNormalization(epsilon=1e-12)
        self.encoder = [BertLayer(c) for _ in range(c["layers"])]
        self.pooler = _dense(d)
        self.classifier = _dense(c["num_classes"])
        self.dropout = layers.Dropout(0.1)

    def build(self, input_shape):
        for e in (self.word, self.position, self.token_type):
            e.build()
        for layer in (self.emb_norm, self.pooler, self.classifier):
            layer.build((None, self.d))
        for layer in self.encoder:
            layer.build((None, None, self.d))

    def call(self, ids):
        t = ids.shape[1]
        x = self.word(ids) + self.position(tf.range(t)) + self.token_type(tf.zeros_like(ids))
        x = self.dropout(self.emb_norm(x))
        for layer in self.encoder:
            x = layer(x)
        pooled = tf.tanh(self.pooler(x[:, 0]))
        return self.classifier(self.dropout(pooled))


def _rotate_half(x):
    a, b = tf.split(x, 2, axis=-1)
    return tf.concat([-b, a], -1)


def rotary_tables(t, head_dim, theta):
    """(cos, sin) of rotary embeddings for positions 0..t-1, (t, head_dim), in
    Hugging Face Llama's layout (the two halves of each head rotate together)."""
    inv = 1.0 / (theta ** (tf.range(0, head_dim, 2, dtype=tf.float32) / head_dim))
    freqs = tf.tensordot(tf.range(t, dtype=tf.float32), inv, axes=0)
    emb = tf.concat([freqs, freqs], -1)
    return tf.cos(emb), tf.sin(emb)


def _decoder_norm(c):
    if c["norm"] == "layer_norm":
        return layers.LayerNormalization(epsilon=1e-5)
    return layers.RMSNormalization(epsilon=1e-5)


def _decoder_dense(units, bias, std):
    return layers.Dense(units, use_bias=bias, kernel_initializer=_normal(std), bias_initializer="zeros")


class DecoderBlock(layers.Layer):
    """The PyTorch worker's DecoderBlock: pre-norm causal self-attention
    (grouped-query when kv_heads < heads; queries, keys and values from one
    fused projection) and a GELU (tanh) or SwiGLU feed-forward block (gate and
    up fused), dropout 0.1 where the config has it."""

    def __init__(self, c, **kwargs):
        super().__init__(**kwargs)
        self.c = c
        d, h, kv = c["hidden"], c["heads"], c["kv_heads"]
        self.d, self.heads, self.kv_heads, self.head_dim = d, h, kv, d // h
        self.inter = c["intermediate"]
        self.swiglu = c["mlp"] == "swi_glu"
        bias = c["bias"]
        # GPT-2 scales the init of the projections into the residual stream.
        out_std = 0.02 / math.sqrt(2 * c["layers"]) if c["norm"] == "layer_norm" else 0.02
        self.norm1, self.norm2 = _decoder_norm(c), _decoder_norm(c)
        self.qkv = _decoder_dense(d + 2 * kv * self.head_dim, bias, 0.02)
        self.o = _decoder_dense(d, bias, out_std)
        self.up = _decoder_dense(2 * self.inter if self.swiglu else self.inter, bias, 0.02)
        self.down = _decoder_dense(d, bias, out_std)
        self.dropout = layers.Dropout(0.1) if c["dropout"] else None

    def build(self, input_shape):
        for layer in (self.norm1, self.qkv, self.o, self.norm2, self.up):
            layer.build((None, self.d))
        self.down.build((None, self.inter))

    def _drop(self, x):
        return x if self.dropout is None else self.dropout(x)

    def call(self, x):
        t, d, hd, kv = x.shape[1], self.d, self.head_dim, self.kv_heads
        qkv = self.qkv(self.norm1(x))

        def heads(y, n):
            return tf.transpose(tf.reshape(y, (-1, t, n, hd)), (0, 2, 1, 3))

        q = heads(qkv[..., :d], self.heads)
        k = heads(qkv[..., d:d + kv * hd], kv)
        v = heads(qkv[..., d + kv * hd:], kv)
        if self.c["positions"] == "rotary":
            cos, sin = (tf.cast(r, q.dtype) for r in rotary_tables(t, hd, float(self.c["rope_theta"])))
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
        a = _attention(q, k, v, self.dropout, causal=True)
        a = tf.reshape(tf.transpose(a, (0, 2, 1, 3)), (-1, t, d))
        x = x + self._drop(self.o(a))
        y = self.up(self.norm2(x))
        if self.swiglu:
            gate, up = tf.split(y, 2, axis=-1)
            y = tf.nn.silu(gate) * up
        else:
            y = tf.nn.gelu(y, approximate=True)
        return x + self._drop(self.down(y))


class Decoder(keras.Model):
    """A decoder-only language model, the PyTorch worker's Decoder: Hugging
    Face's GPT2LMHeadModel (learned positions, LayerNorm, GELU, biases, tied
    head, dropout 0.1) or LlamaForCausalLM (rotary positions, RMSNorm, SwiGLU,
    grouped-query attention, no biases) as the config says. Returns logits."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        d = c["hidden"]
        self.d = d
        self.embed = layers.Embedding(c["vocab_size"], d, embeddings_initializer=_normal(0.02))
        self.pos = layers.Embedding(c["max_position"], d, embeddings_initializer=_normal(0.02)) \
            if c["positions"] == "learned" else None
        self.blocks = [DecoderBlock(c) for _ in range(c["layers"])]
        self.norm = _decoder_norm(c)
        self.head = None if c["tie_embeddings"] else _decoder_dense(c["vocab_size"], False, 0.02)
        self.dropout = layers.Dropout(0.1) if c["dropout"] else None

    def build(self, input_shape):
        self.embed.build()
        if self.pos is not None:
            self.pos.build()
        for b in self.blocks:
            b.build((None, None, self.d))
        self.norm.build((None, self.d))
        if self.head is not None:
            self.head.build((None, self.d))

    def call(self, ids):
        t = ids.shape[1]
        x = self.embed(ids)
        if self.pos is not None:
            x = x + self.pos(tf.range(t))
        if self.dropout is not None:
            x = self.dropout(x)
        for b in self.blocks:
            x = b(x)
        x = self.norm(x)
        if self.head is None:
            # The tied head: the token embedding's transpose, in the compute dtype.
            return tf.matmul(x, tf.cast(self.embed.embeddings, x.dtype), transpose_b=True)
        return self.head(x)


class EncoderLayer(layers.Layer):
    """PyTorch's nn.TransformerEncoderLayer (batch_first, post-norm, ReLU,
    dropout 0.1 on the attention probabilities, after the attention and in
    and after the feed-forward block; LayerNorm eps 1e-5), its attention
    Keras' ``layers.MultiHeadAttention`` as a Keras user writes it."""

    def __init__(self, c, **kwargs):
        super().__init__(**kwargs)
        d = c["hidden"]
        self.d, self.heads, self.inter = d, c["heads"], c["intermediate"]
        self.attn = KerasAttention(self.heads, d // self.heads, dropout=0.1, kernel_initializer=_normal(0.02),
                                   bias_initializer="zeros")
        self.linear1, self.linear2 = _dense(self.inter), _dense(d)
        self.norm1 = layers.LayerNormalization(epsilon=1e-5)
        self.norm2 = layers.LayerNormalization(epsilon=1e-5)
        self.dropout = layers.Dropout(0.1)

    def build(self, input_shape):
        for layer in (self.linear1, self.norm1, self.norm2):
            layer.build((None, self.d))
        self.attn.build((None, None, self.d), (None, None, self.d))
        self.linear2.build((None, self.inter))

    def call(self, x):
        x = self.norm1(x + self.dropout(self.attn(x, x)))
        ff = self.linear2(self.dropout(tf.nn.relu(self.linear1(x))))
        return self.norm2(x + self.dropout(ff))


class FraudTransformer(keras.Model):
    """The fraud-detection transformer (torch_worker.FraudTransformer):
    token and position embeddings, post-norm encoder layers, the mean over
    positions, a linear head."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        d = c["hidden"]
        self.embedding = layers.Embedding(c["vocab_size"], d, embeddings_initializer=_normal(1.0))
        self.pos_encoder = layers.Embedding(c["max_position"], d, embeddings_initializer=_normal(1.0))
        self.encoder = [EncoderLayer(c) for _ in range(c["layers"])]
        self.fc = layers.Dense(c["num_classes"], kernel_initializer=_torch_default(d),
                               bias_initializer=_torch_default(d))

    def build(self, input_shape):
        self.embedding.build()
        self.pos_encoder.build()
        for layer in self.encoder:
            layer.build((None, None, self.c["hidden"]))
        self.fc.build((None, self.c["hidden"]))

    def call(self, ids):
        x = self.embedding(ids) + self.pos_encoder(tf.range(ids.shape[1]))
        for layer in self.encoder:
            x = layer(x)
        return self.fc(tf.reduce_mean(x, axis=1))


def input_shape(config):
    """The model's input, batch first: NHWC images or token ids."""
    if config["family"] in TOKEN_FAMILIES:
        return (None, config["seq_len"])
    return (None, config["image_size"], config["image_size"], config["in_channels"])


def build(config):
    """The model with its variables created. Dropout and batch norm follow the
    ``training`` argument of the outer call, which Keras hands to every layer."""
    model = {"vit": Vit, "resnet": ResNet, "bert": Bert, "decoder": Decoder,
             "encoder": FraudTransformer}[config["family"]](config)
    model.build(input_shape(config))
    return model


def _count(model):
    return sum(math.prod(w.shape) for w in model.trainable_weights)


def count_params(config):
    # Variables created in a stateless scope keep only their shapes; leaving it
    # without initialising them allocates nothing.
    with keras.StatelessScope(initialize_variables=False):
        model = build(config)
    return _count(model)


# --- the backend --------------------------------------------------------------

def _per_sample_loss(logits, y, binary):
    """Softmax cross-entropy, or binary cross-entropy on one logit (the fraud
    model's head)."""
    if binary:
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.cast(y, tf.float32), logits=logits[..., 0])
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)


def is_oom(e):
    """Whether a framework exception means out of memory."""
    return isinstance(e, (tf.errors.ResourceExhaustedError, MemoryError))


def _gpu_name(gpu):
    return tf.config.experimental.get_device_details(gpu).get("device_name", gpu.name)


def _compute_capability(gpu):
    return tf.config.experimental.get_device_details(gpu).get("compute_capability", (0, 0))


class TFBackend(Backend):
    worker = "tensorflow"
    framework = "tensorflow"

    def __init__(self, plan):
        self.plan = plan
        self.framework_version = tf.__version__
        self.world_size = plan.devices * plan.nodes
        self.multi = plan.nodes > 1
        if self.multi:
            # One worker process per node (srun), a TF_CONFIG cluster of them
            # all: MultiWorkerMirroredStrategy, before any other TensorFlow op.
            import json

            workers = [w for w in os.environ.get("TRAINBENCH_TF_WORKERS", "").split(",") if w]
            if len(workers) != plan.nodes:
                raise unsupported(f"nodes = {plan.nodes}: {len(workers)} worker addresses (the worker launches itself "
                                  "under srun inside a Slurm allocation)", "nodes")
            if not plan.is_cuda and plan.devices > 1:
                raise unsupported(f"devices = {plan.devices} is not allowed with nodes = {plan.nodes} on the CPU for "
                                  "TensorFlow: expected 1 per node (one CPU replica per worker)", "devices")
            self.rank = int(os.environ.get("TRAINBENCH_NODE_RANK", os.environ.get("SLURM_PROCID", "0")))
            os.environ["TF_CONFIG"] = json.dumps({"cluster": {"worker": workers},
                                                  "task": {"type": "worker", "index": self.rank}})
        self._devices(plan)
        keras.utils.set_random_seed(plan.seed)
        self._precision(plan)
        self.binary = classification_loss_kind(plan.config) == "binary"
        n = plan.devices
        self.cross_device = None
        if self.multi:
            impl = (tf.distribute.experimental.CommunicationImplementation.NCCL if plan.is_cuda
                    else tf.distribute.experimental.CommunicationImplementation.RING)
            self.strategy = tf.distribute.MultiWorkerMirroredStrategy(
                communication_options=tf.distribute.experimental.CommunicationOptions(implementation=impl))
            n = self.strategy.num_replicas_in_sync
        elif n > 1:
            # One process, one replica per device; gradients all-reduced inside
            # the optimizer's update.
            self.cross_device = tf.distribute.NcclAllReduce() if plan.is_cuda else tf.distribute.ReductionToOneDevice()
            self.strategy = tf.distribute.MirroredStrategy(self.replicas, cross_device_ops=self.cross_device)
        else:
            self.strategy = tf.distribute.get_strategy()
        try:
            with self.strategy.scope():
                self.model = build(plan.config)
                opt = keras.optimizers.AdamW(learning_rate=plan.lr, weight_decay=plan.weight_decay,
                                             beta_1=ADAMW_BETAS[0], beta_2=ADAMW_BETAS[1], epsilon=ADAMW_EPS)
                self.opt = keras.optimizers.LossScaleOptimizer(opt) if plan.precision == "amp-fp16" else opt
                self.opt.build(self.model.trainable_variables)
        except tf.errors.ResourceExhaustedError as e:
            raise WorkerError("oom", f"out of memory building {plan.model}: {first_line(e)}") from e
        self.params = _count(self.model)
        xla = plan.compile == "xla"
        # XLA compiles one device's program: with several replicas only the
        # forward and backward pass of each replica is compiled, and the
        # all-reduce and optimizer update run in the graph around it.
        self.grads = tf.function(self._loss_and_grads, jit_compile=True) if xla and n > 1 else self._loss_and_grads
        self.step_fn = tf.function(self._step, jit_compile=xla and n == 1)
        self.jit_step = xla and n == 1
        self.eval_fn = tf.function(self._eval_batch, jit_compile=xla)
        self.traced_s = None
        self.streamed = plan.data == "folder"

    def _devices(self, plan):
        """Threads, visible GPUs and logical CPUs: all before TensorFlow's
        runtime starts. ``plan.threads()`` is per replica (per process in the
        PyTorch worker); replicas in this process share one pool, so on the CPU
        it holds that many threads per replica, and replicas run side by side."""
        n = plan.devices
        cpu_replicas = 1 if plan.is_cuda else n
        tf.config.threading.set_intra_op_parallelism_threads(plan.threads() * cpu_replicas)
        tf.config.threading.set_inter_op_parallelism_threads(n)
        gpus = tf.config.list_physical_devices("GPU")
        if plan.is_cuda:
            if not gpus:
                raise unsupported(f"device = {plan.device}: this TensorFlow ({tf.__version__}) sees no CUDA device",
                                  "device")
            if plan.cuda_index + n > len(gpus):
                raise unsupported(
                    f"devices = {n}: TensorFlow sees {len(gpus)} GPU(s), too few from {plan.device} on", "devices")
            self.gpus = gpus[plan.cuda_index:plan.cuda_index + n]
            tf.config.set_visible_devices(self.gpus, "GPU")
            for g in self.gpus:
                tf.config.experimental.set_memory_growth(g, True)
            self.replicas = [f"/gpu:{i}" for i in range(n)]
        else:
            self.gpus = []
            tf.config.set_visible_devices([], "GPU")  # a CPU run keeps TensorFlow off the GPUs
            if n > 1:
                cpu = tf.config.list_physical_devices("CPU")[0]
                tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * n)
            self.replicas = [f"/cpu:{i}" for i in range(n)]
        self.home = self.replicas[0]

    def _precision(self, plan):
        p = plan.precision
        cuda = plan.is_cuda
        # The lowest GPU of the run decides; bfloat16 by the capability (TensorFlow gives no verdict of its own).
        check_precision(p, cuda, capability_major=min(_compute_capability(g)[0] for g in self.gpus) if cuda else None)
        # TensorFlow turns TF32 on by default on Ampere and newer: fp32 means off.
        tf.config.experimental.enable_tensor_float_32_execution(p == "tf32")
        policy = "float32"
        if p == "fp32":
            self.text = "fp32 everywhere" + ("; TF32 tensor cores off" if cuda else "")
        elif p == "tf32":
            self.text = "fp32 storage; TF32 matmuls and convolutions"
        elif p == "amp-bf16":
            policy = "mixed_bfloat16"
            self.text = "Keras mixed_bfloat16 policy (bfloat16 compute); fp32 variables and loss; no loss scaling"
        else:
            policy = "mixed_float16"
            self.text = "Keras mixed_float16 policy with LossScaleOptimizer (dynamic loss scaling); fp32 variables"
        keras.mixed_precision.set_global_policy(policy)

    def libraries(self):
        libs = [("python", sys.version.split()[0]), ("keras", keras.__version__)]
        build_info = tf.sysconfig.get_build_info()
        if build_info.get("cuda_version"):
            libs.append(("cuda (tf build)", build_info["cuda_version"]))
        if self.plan.is_cuda and build_info.get("cudnn_version"):
            libs.append(("cudnn (tf build)", build_info["cudnn_version"]))
        if self.cross_device is not None:
            libs.append(("tf.distribute cross-device ops", type(self.cross_device).__name__))
        if self.multi:
            libs.append(("tf.distribute collectives", "NCCL" if self.plan.is_cuda else "RING (gRPC)"))
        return libs

    def devices_visible(self):
        gpus = tf.config.list_physical_devices("GPU")
        return [{"id": "cpu", "name": cpu_name()}] + [
            {"id": f"cuda:{i}", "name": _gpu_name(g)} for i, g in enumerate(gpus)]

    def device_info(self):
        if self.plan.is_cuda:
            return {"id": f"cuda:{self.plan.cuda_index}", "name": _gpu_name(self.gpus[0])}
        return {"id": "cpu", "name": cpu_name()}

    def param_count(self):
        return self.params

    def precision_in_effect(self):
        return self.text

    def execution(self):
        n = self.plan.devices
        if self.plan.compile == "off":
            mode = "tf.function graph"
        elif n == 1:
            mode = "tf.function(jit_compile=True) (XLA)"
        else:
            mode = "tf.function graph; each replica's forward and backward in tf.function(jit_compile=True) (XLA)"
        if self.multi:
            mode += (f"; MultiWorkerMirroredStrategy over {self.plan.nodes} workers × {n} "
                     f"{'GPU(s) (NCCL)' if self.plan.is_cuda else 'CPU replica (RING collectives over gRPC)'}")
        elif n > 1:
            mode += f"; MirroredStrategy over {n} {'GPUs (NCCL)' if self.plan.is_cuda else 'logical CPU devices'}"
        if self.plan.family in ("vit", "bert", "encoder"):
            mode += "; attention: Keras' layers.MultiHeadAttention"
        elif self.plan.family != "resnet":
            mode += ("; attention: matmul, softmax and matmul ops written out (TensorFlow has no fused attention "
                     "kernel; Keras's dot_product_attention composes the same ops and refuses flash_attention here)")
        return mode

    def set_data(self, data):
        def images(x):  # NCHW → NHWC, once (tf.constant copies the view)
            return x if self.plan.family in TOKEN_FAMILIES else x.transpose(0, 2, 3, 1)

        if data.streamed:
            self._set_stream(data)
        with tf.device(self.home):
            if not data.streamed:
                x, y = data.train
                self.x, self.y = tf.constant(images(x)), tf.constant(y.astype("int32"))
            if data.eval is not None:
                self.ex, self.ey = tf.constant(images(data.eval[0])), tf.constant(data.eval[1].astype("int32"))

    def _set_stream(self, data):
        """An image folder through tf.data: file names in the harness's
        order, read, decoded and augmented by ``map`` with ``loader_workers``
        parallel calls (0: on the training thread, nothing ahead), batched,
        two batches prefetched. The step takes the decoded batch instead of
        gathering from arrays it holds."""
        from . import images as host

        n = int(self.plan.loader_workers)
        size = int(self.plan.config["image_size"])
        files, labels = data.train
        with tf.device("/cpu:0"):
            names = tf.constant(files)
            classes = tf.constant(labels.astype("int32"))
            mean, std = tf.constant(host.MEAN), tf.constant(host.STD)
        seed = int(self.plan.seed)

        def positions():
            for idx, epoch in data.orders():
                for i in idx:
                    yield int(i), epoch

        def load(i, epoch):
            # The sample's randomness from (seed, epoch, position), as in every loader.
            key = tf.stack([tf.constant(seed, tf.int64) * 1_000_003 + epoch, i])
            img = tf.io.decode_image(tf.io.read_file(tf.gather(names, i)), channels=3, expand_animations=False)
            begin, extent, _ = tf.image.stateless_sample_distorted_bounding_box(
                tf.shape(img), bounding_boxes=tf.constant([[[0.0, 0.0, 1.0, 1.0]]]), seed=key,
                min_object_covered=0.0, aspect_ratio_range=host.RATIO, area_range=host.SCALE, max_attempts=10,
                use_image_if_no_bounding_boxes=True)
            img = tf.image.resize(tf.slice(img, begin, extent), [size, size], method="bilinear")
            img = tf.image.stateless_random_flip_left_right(img, seed=key + 1)
            return (img / 255.0 - mean) / std, tf.gather(classes, i)

        ds = tf.data.Dataset.from_generator(
            positions, output_signature=(tf.TensorSpec([], tf.int64), tf.TensorSpec([], tf.int64)))
        ds = ds.map(load, num_parallel_calls=n or None, deterministic=True)
        ds = ds.batch(self.plan.global_batch, drop_remainder=True)
        if n:
            ds = ds.prefetch(2)
        options = tf.data.Options()
        options.autotune.enabled = False
        options.threading.private_threadpool_size = max(n, 1)
        ds = ds.with_options(options)
        self.step_fn = tf.function(self._host_step, jit_compile=self.jit_step)
        where = (f"map with {n} parallel call{'s' if n > 1 else ''}, 2 batches prefetched" if n else
                 "map on the training thread (no parallel calls, nothing prefetched)")
        data.attach(_Stream(iter(ds), files), f"tf.data ({where}); tf.io.decode_image, "
                                       "stateless_sample_distorted_bounding_box crop, flip, normalise")

    def _loss_and_grads(self, x, y):
        """One replica's share of the global batch: its loss (the sum over its
        samples divided by the global batch, so that the all-reduced sum of
        gradients is the gradient of the global mean) and its gradients."""
        # A decoder's loss: the mean over the global batch's next tokens.
        x, y = inputs_and_targets(self.plan, x, y)
        per_sample = predictions_per_sample(self.plan)
        with tf.GradientTape() as tape:
            logits = tf.cast(self.model(x, training=True), tf.float32)
            ce = _per_sample_loss(logits, y, self.binary)
            loss = tf.reduce_sum(ce) / (self.plan.global_batch * per_sample)
            scaled = self.opt.scale_loss(loss)  # times the dynamic loss scale under amp-fp16
        return loss, tape.gradient(scaled, self.model.trainable_variables)

    def _replica_step(self, x, y):
        loss, grads = self.grads(x, y)
        with tf.name_scope("trainbench.optimizer"):  # a label for the operator profile
            self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    def _step(self, idx, lr):
        with tf.device(self.home):
            x, y = tf.gather(self.x, idx), tf.gather(self.y, idx)
        return self._host_step(x, y, lr)

    def _host_step(self, x, y, lr):
        self.opt.learning_rate.assign(lr)
        n = self.strategy.num_replicas_in_sync  # every worker's replicas
        with tf.device(self.home):
            xs = tf.split(x, n)
            ys = tf.split(y, n)
        x = self.strategy.experimental_distribute_values_from_function(lambda ctx: xs[ctx.replica_id_in_sync_group])
        y = self.strategy.experimental_distribute_values_from_function(lambda ctx: ys[ctx.replica_id_in_sync_group])
        losses = self.strategy.run(self._replica_step, args=(x, y))
        return self.strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    def step(self, idx, lr):
        if isinstance(idx, HostBatch):
            args = (idx.x, idx.y, tf.constant(lr, tf.float32))
        else:
            args = (tf.constant(idx), tf.constant(lr, tf.float32))
        try:
            if self.traced_s is None:
                # Tracing the step into a graph, timed on its own; graph
                # optimisation and XLA compilation happen in step 1's run.
                start = time.perf_counter()
                self.step_fn.get_concrete_function(*args)
                self.traced_s = time.perf_counter() - start
            return self.step_fn(*args)
        except tf.errors.ResourceExhaustedError as e:
            raise WorkerError("oom", f"out of memory in a training step of {self.plan.model} "
                                     f"(batch {self.plan.batch_size} per device): {first_line(e)}") from e

    def compile_s(self):
        return self.traced_s

    def fused(self):
        graph = "one tf.function(jit_compile=True) XLA program" if self.plan.compile == "xla" else "one tf.function graph"
        first = "forward" if self.streamed else "batch gather, forward"
        text = f"{first}, backward and optimizer update run as {graph}"
        if self.plan.devices > 1 or self.multi:
            text += ", with the strategy's gradient all-reduce inside"
        return text

    def communication(self):
        if self.plan.devices == 1 and not self.multi:
            return None
        return "MirroredStrategy all-reduces gradients inside the step's graph: communication is part of the fused step"

    def compile_count(self):
        return int(self.step_fn.experimental_get_tracing_count())

    def compile_source(self):
        return "tf.function's tracing count of the training step (a retrace builds and compiles a new graph)"

    def profile(self, run_step, steps):
        import glob
        import tempfile

        from tensorflow.tsl.profiler.protobuf import xplane_pb2

        from . import profiling

        run_step()  # one step outside the profiler
        self.sync()
        with tempfile.TemporaryDirectory(prefix="trainbench-profile-") as d:
            tf.profiler.experimental.start(d)
            try:
                with tf.profiler.experimental.Trace(profiling.SPAN):
                    for _ in range(steps):
                        run_step()
                    self.sync()
            finally:
                tf.profiler.experimental.stop()
            files = glob.glob(os.path.join(d, "**", "*.xplane.pb"), recursive=True)
            if not files:
                return {"not_measured": "the TensorFlow profiler wrote no .xplane.pb"}
            space = xplane_pb2.XSpace()
            with open(files[0], "rb") as f:
                space.ParseFromString(f.read())
        events, timeline, span_s = profiling.xplane_events(space)
        what = ("kernels on the GPU's streams, categorised by the TensorFlow op that launched them"
                if timeline == "device" else
                "TensorFlow graph ops on the executor's threads (they may run in parallel)")
        if self.plan.compile == "xla":
            what += "; under XLA the step's ops run inside compiled clusters, shown as such"
        return profiling.reduce(events, span_s, steps, f"TensorFlow profiler (XPlane; TensorFlow {tf.__version__})",
                                timeline, what)

    def sync(self):
        if self.multi:
            # sync_devices would wait on every worker's devices (which this
            # eager context does not reach): reading the optimizer's step
            # count waits for this worker's last update instead.
            self.opt.iterations.numpy()
            return
        tf.test.experimental.sync_devices()

    def loss_values(self, handles):
        return tf.stack(handles).numpy().astype(float).tolist()

    def _eval_batch(self, x, y):
        with tf.device(self.home):
            x, y = inputs_and_targets(self.plan, x, y)
            logits = tf.cast(self.model(x, training=False), tf.float32)
            loss = tf.reduce_sum(_per_sample_loss(logits, y, self.binary))
            if self.binary:
                predicted = tf.cast(logits[..., 0] > 0, tf.int32)
            else:
                predicted = tf.argmax(logits, -1, output_type=tf.int32)
            correct = tf.reduce_sum(tf.cast(tf.equal(predicted, y), tf.int32))
        return loss, correct

    def evaluate(self):
        """On the first device only, as the PyTorch worker's rank 0."""
        correct, total_loss, n = 0, 0.0, int(self.ey.shape[0])
        step = eval_batch(self.plan)
        for s in range(0, n, step):
            loss, right = self.eval_fn(self.ex[s:s + step], self.ey[s:s + step])
            total_loss += float(loss)
            correct += int(right)
        predictions = n * predictions_per_sample(self.plan)
        return correct / predictions, total_loss / predictions, n

    def loss_scale(self):
        if isinstance(self.opt, keras.optimizers.LossScaleOptimizer):
            return float(self.opt.dynamic_scale.numpy())
        return None

    def memory_events(self):
        events = [{"device": f"cuda:{self.plan.cuda_index + i}", "source": "allocator",
                   "peak_bytes": tf.config.experimental.get_memory_info(f"GPU:{i}")["peak"],
                   "reserved_peak_bytes": None} for i in range(len(self.gpus))]
        return events + super().memory_events()


def info():
    build_info = tf.sysconfig.get_build_info()
    return {"version": tf.__version__, "gpus": [_gpu_name(g) for g in tf.config.list_physical_devices("GPU")],
            "libraries": {"keras": keras.__version__, "cuda (tf build)": build_info.get("cuda_version"),
                          "cudnn (tf build)": build_info.get("cudnn_version")}}


class _Stream:
    def __init__(self, it, files):
        self.it, self.files = it, files

    def __iter__(self):
        return self

    def __next__(self):
        try:
            x, y = next(self.it)
        except tf.errors.InvalidArgumentError as e:
            # tf.io.decode_image does not say which file it could not decode: find it.
            from . import images

            for path in self.files:
                images.eval_image(path, 8)  # raises the WorkerError naming the file
            raise WorkerError("bad_config", f"data_path: tf.data could not decode an image: {first_line(e)}",
                              field="data_path") from e
        return HostBatch(x, y)


Backend = TFBackend
