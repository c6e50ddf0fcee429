"""The TensorFlow worker's models: the PyTorch worker's (torch_models.py)
written with Keras layers at their defaults, images in NHWC, the same
parameter counts.
"""

import math
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras
import tensorflow as tf
from keras import layers

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
        self.patch = layers.Conv2D(
            d,
            p,
            strides=p,
            padding="valid",
            kernel_initializer=_torch_default(fan_in),
            bias_initializer=_torch_default(fan_in),
        )
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
            out,
            k,
            strides=stride,
            padding="same" if self.pad is None else "valid",
            use_bias=False,
            kernel_initializer=keras.initializers.VarianceScaling(2.0, "fan_out", "untruncated_normal"),
        )
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
        self.fc = layers.Dense(
            c["num_classes"], kernel_initializer=_torch_default(inp), bias_initializer=_torch_default(inp)
        )  # nn.Linear's default init, as torchvision

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
        self.attn = KerasAttention(
            self.heads, d // self.heads, dropout=0.1, kernel_initializer=_normal(0.02), bias_initializer="zeros"
        )
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


def keras_attention(config):
    """Whether the model's attention is Keras' ``layers.MultiHeadAttention``:
    the ViT, BERT, the encoder classifier and GPT-2 (learned positions, every
    head its own keys and values). Llama's rotary positions and grouped-query
    heads are not what that layer takes: written out."""
    if config["family"] == "decoder":
        return config["positions"] == "learned" and config["kv_heads"] == config["heads"]
    return config["family"] in ("vit", "bert", "encoder")


class DecoderBlock(layers.Layer):
    """The PyTorch worker's DecoderBlock: pre-norm causal self-attention
    (GPT-2: Keras' layers.MultiHeadAttention with its causal mask; Llama:
    grouped-query when kv_heads < heads, queries, keys and values from one
    fused projection, rotary positions) and a GELU (tanh) or SwiGLU
    feed-forward block (gate and up fused), dropout 0.1 where the config has
    it."""

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
        self.keras = keras_attention(c)
        self.out_std = out_std
        if self.keras:
            self.attn = KerasAttention(
                h,
                self.head_dim,
                dropout=0.1 if c["dropout"] else 0.0,
                use_bias=bias,
                kernel_initializer=_normal(0.02),
                bias_initializer="zeros",
            )
        else:
            self.qkv = _decoder_dense(d + 2 * kv * self.head_dim, bias, 0.02)
            self.o = _decoder_dense(d, bias, out_std)
        self.up = _decoder_dense(2 * self.inter if self.swiglu else self.inter, bias, 0.02)
        self.down = _decoder_dense(d, bias, out_std)
        self.dropout = layers.Dropout(0.1) if c["dropout"] else None

    def build(self, input_shape):
        for layer in (self.norm1, self.norm2, self.up) + (() if self.keras else (self.qkv, self.o)):
            layer.build((None, self.d))
        if self.keras:
            self.attn.build((None, None, self.d), (None, None, self.d))
            # GPT-2's smaller init of the projection into the residual stream
            # (Keras' layer takes one initializer for all four projections).
            out = self.attn._output_dense.kernel
            out.assign(_normal(self.out_std)(out.shape))
        self.down.build((None, self.inter))

    def _drop(self, x):
        return x if self.dropout is None else self.dropout(x)

    def call(self, x):
        if self.keras:
            y = self.norm1(x)
            x = x + self._drop(self.attn(y, y, use_causal_mask=True))
            return self._mlp(x)
        t, d, hd, kv = x.shape[1], self.d, self.head_dim, self.kv_heads
        qkv = self.qkv(self.norm1(x))

        def heads(y, n):
            return tf.transpose(tf.reshape(y, (-1, t, n, hd)), (0, 2, 1, 3))

        q = heads(qkv[..., :d], self.heads)
        k = heads(qkv[..., d : d + kv * hd], kv)
        v = heads(qkv[..., d + kv * hd :], kv)
        if self.c["positions"] == "rotary":
            cos, sin = (tf.cast(r, q.dtype) for r in rotary_tables(t, hd, float(self.c["rope_theta"])))
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
        a = _attention(q, k, v, self.dropout, causal=True)
        a = tf.reshape(tf.transpose(a, (0, 2, 1, 3)), (-1, t, d))
        x = x + self._drop(self.o(a))
        return self._mlp(x)

    def _mlp(self, x):
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
        self.pos = (
            layers.Embedding(c["max_position"], d, embeddings_initializer=_normal(0.02))
            if c["positions"] == "learned"
            else None
        )
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
        self.attn = KerasAttention(
            self.heads, d // self.heads, dropout=0.1, kernel_initializer=_normal(0.02), bias_initializer="zeros"
        )
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
    """The fraud-detection transformer (torch_models.FraudTransformer):
    token and position embeddings, post-norm encoder layers, the mean over
    positions, a linear head."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        d = c["hidden"]
        self.embedding = layers.Embedding(c["vocab_size"], d, embeddings_initializer=_normal(1.0))
        self.pos_encoder = layers.Embedding(c["max_position"], d, embeddings_initializer=_normal(1.0))
        self.encoder = [EncoderLayer(c) for _ in range(c["layers"])]
        self.fc = layers.Dense(
            c["num_classes"], kernel_initializer=_torch_default(d), bias_initializer=_torch_default(d)
        )

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
    # Token ids unless the model's configuration has an image size.
    if not config.get("image_size"):
        return (None, config["seq_len"])
    return (None, config["image_size"], config["image_size"], config["in_channels"])


def build(config):
    """The model with its variables created. Dropout and batch norm follow the
    ``training`` argument of the outer call, which Keras hands to every layer."""
    model = {"vit": Vit, "resnet": ResNet, "bert": Bert, "decoder": Decoder, "encoder": FraudTransformer}[
        config["family"]
    ](config)
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
