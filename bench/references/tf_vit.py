"""ViT-Tiny/16 trained the way a Keras user writes it, without the studio:
Keras layers at their defaults (``layers.MultiHeadAttention``,
``layers.LayerNormalization``, ``layers.Dense``), ``keras.optimizers.AdamW``,
``model.compile`` + ``train_on_batch``. The architecture is timm's
``vit_tiny_patch16_224`` (class token, learned positions, pre-norm blocks,
LayerNorm eps 1e-6, exact GELU, head on the class token): 5,526,346
parameters with 10 classes, as the studio's.

    python bench/references/tf_vit.py [--batch 8] [--steps 20] [--warmup 4]

Prints one JSON line: parameters and the median window's samples/s.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras
import numpy as np
import tensorflow as tf
from keras import layers
from timing import arguments, measure, report


class ClassToken(layers.Layer):
    def build(self, input_shape):
        d = input_shape[-1]
        self.cls = self.add_weight(shape=(1, 1, d), initializer="zeros", name="cls")
        self.pos = self.add_weight(
            shape=(1, input_shape[1] + 1, d), initializer=keras.initializers.RandomNormal(stddev=0.02), name="pos"
        )

    def call(self, x):
        cls = tf.broadcast_to(self.cls, (tf.shape(x)[0], 1, x.shape[-1]))
        return tf.concat([cls, x], 1) + self.pos


def vit(classes, dim=192, depth=12, heads=3, mlp=768, patch=16):
    images = keras.Input((224, 224, 3))
    x = layers.Conv2D(dim, patch, strides=patch)(images)
    x = layers.Reshape((-1, dim))(x)
    x = ClassToken()(x)
    for _ in range(depth):
        y = layers.LayerNormalization(epsilon=1e-6)(x)
        x = x + layers.MultiHeadAttention(heads, dim // heads)(y, y)
        y = layers.LayerNormalization(epsilon=1e-6)(x)
        y = layers.Dense(mlp, activation=lambda t: tf.nn.gelu(t, approximate=False))(y)
        x = x + layers.Dense(dim)(y)
    x = layers.LayerNormalization(epsilon=1e-6)(x)
    return keras.Model(images, layers.Dense(classes)(x[:, 0]))


def main():
    a = arguments(batch=8).parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(a.threads)
    tf.config.threading.set_inter_op_parallelism_threads(a.threads)
    model = vit(a.classes)
    model.compile(
        optimizer=keras.optimizers.AdamW(1e-3, weight_decay=0.05, beta_1=0.9, beta_2=0.999, epsilon=1e-8),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    rng = np.random.default_rng(0)
    x = rng.standard_normal((a.batch, 224, 224, 3), dtype=np.float32)
    y = rng.integers(0, a.classes, a.batch)
    # train_on_batch returns the loss as a number: each step has ended.
    result = measure(lambda: model.train_on_batch(x, y), lambda _: None, a)
    report("tensorflow", "vit_tiny_patch16_224", trainable(model), a, result, version=tf.__version__)


def trainable(model):
    return int(sum(np.prod(w.shape) for w in model.trainable_weights))


if __name__ == "__main__":
    main()
