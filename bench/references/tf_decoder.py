"""A small GPT-2 as a Keras user writes it: ``layers.Embedding`` for tokens
and positions, pre-norm blocks of ``layers.LayerNormalization``,
``layers.MultiHeadAttention`` with ``use_causal_mask`` and attention dropout
0.1, a tanh-GELU MLP, dropout 0.1, the head tied to the token embedding;
``keras.optimizers.AdamW``, ``compile`` + ``train_on_batch``, the next-token
loss over every position. 2 layers, width 128, 2 heads, vocabulary 256, 128
positions: 445,952 parameters, as the studio's ``gpt2_tiny``. Samples are
sequences of 128 tokens.

    python bench/references/tf_decoder.py [--batch 8] [--steps 20] [--threads 1]
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras
import numpy as np
import tensorflow as tf
from keras import layers, ops
from tf_vit import trainable
from timing import arguments, measure, report

SEQ, VOCAB, WIDTH, LAYERS, HEADS = 128, 256, 128, 2, 2


class Block(layers.Layer):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.norm1 = layers.LayerNormalization(epsilon=1e-5)
        self.attn = layers.MultiHeadAttention(HEADS, WIDTH // HEADS, dropout=0.1)
        self.norm2 = layers.LayerNormalization(epsilon=1e-5)
        self.up = layers.Dense(4 * WIDTH, activation=lambda t: keras.activations.gelu(t, approximate=True))
        self.down = layers.Dense(WIDTH)
        self.drop = layers.Dropout(0.1)

    def call(self, x, training=False):
        y = self.norm1(x)
        x = x + self.drop(self.attn(y, y, use_causal_mask=True, training=training), training=training)
        return x + self.drop(self.down(self.up(self.norm2(x))), training=training)


class GPT(keras.Model):
    def __init__(self, **kw):
        super().__init__(**kw)
        init = keras.initializers.RandomNormal(stddev=0.02)
        self.wte = layers.Embedding(VOCAB, WIDTH, embeddings_initializer=init)
        self.wpe = layers.Embedding(SEQ, WIDTH, embeddings_initializer=init)
        self.drop = layers.Dropout(0.1)
        self.blocks = [Block() for _ in range(LAYERS)]
        self.norm = layers.LayerNormalization(epsilon=1e-5)

    def call(self, ids, training=False):
        x = self.drop(self.wte(ids) + self.wpe(ops.arange(ops.shape(ids)[1])), training=training)
        for block in self.blocks:
            x = block(x, training=training)
        return ops.matmul(self.norm(x), ops.transpose(self.wte.embeddings))


def main():
    a = arguments(batch=8).parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(a.threads)
    tf.config.threading.set_inter_op_parallelism_threads(a.threads)
    model = GPT()
    model.compile(
        optimizer=keras.optimizers.AdamW(1e-3, weight_decay=0.05, beta_1=0.9, beta_2=0.999, epsilon=1e-8),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    tokens = np.random.default_rng(0).integers(0, VOCAB, (a.batch, SEQ + 1))
    model(tokens[:1, :-1])  # builds the weights
    result = measure(lambda: model.train_on_batch(tokens[:, :-1], tokens[:, 1:]), lambda _: None, a)
    report("tensorflow", "gpt2_tiny", trainable(model), a, result, version=tf.__version__)


if __name__ == "__main__":
    main()
