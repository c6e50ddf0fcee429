"""ResNet-18 as a Keras user writes it (the layers of
``keras.applications``' ResNets: ``layers.Conv2D`` without bias,
``layers.BatchNormalization`` with eps 1.001e-5, ``ZeroPadding2D`` + 7×7
stem and max pool, 'same' 3×3 convolutions, NHWC), ``keras.optimizers.AdamW``,
``compile`` + ``train_on_batch``: 11,181,642 trainable parameters at 10
classes, as the studio's ``resnet18``.

    python bench/references/tf_resnet.py [--batch 8] [--steps 20] [--threads 1]
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras
import numpy as np
import tensorflow as tf
from keras import layers
from tf_vit import trainable
from timing import arguments, measure, report


def conv_bn(x, filters, kernel, strides):
    x = layers.Conv2D(filters, kernel, strides=strides, padding="same", use_bias=False)(x)
    return layers.BatchNormalization(epsilon=1.001e-5)(x)


def basic_block(x, filters, strides):
    shortcut = x
    if strides != 1 or x.shape[-1] != filters:
        shortcut = conv_bn(x, filters, 1, strides)
    y = layers.ReLU()(conv_bn(x, filters, 3, strides))
    y = conv_bn(y, filters, 3, 1)
    return layers.ReLU()(layers.Add()([shortcut, y]))


def resnet18(classes):
    images = keras.Input((224, 224, 3))
    x = layers.ZeroPadding2D(3)(images)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False)(x)
    x = layers.ReLU()(layers.BatchNormalization(epsilon=1.001e-5)(x))
    x = layers.MaxPooling2D(3, strides=2)(layers.ZeroPadding2D(1)(x))
    for i, width in enumerate([64, 128, 256, 512]):
        for j in range(2):
            x = basic_block(x, width, 2 if i > 0 and j == 0 else 1)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(images, layers.Dense(classes)(x))


def main():
    a = arguments(batch=8).parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(a.threads)
    tf.config.threading.set_inter_op_parallelism_threads(a.threads)
    model = resnet18(a.classes)
    model.compile(
        optimizer=keras.optimizers.AdamW(1e-3, weight_decay=0.05, beta_1=0.9, beta_2=0.999, epsilon=1e-8),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    rng = np.random.default_rng(0)
    x = rng.standard_normal((a.batch, 224, 224, 3), dtype=np.float32)
    y = rng.integers(0, a.classes, a.batch)
    result = measure(lambda: model.train_on_batch(x, y), lambda _: None, a)
    report("tensorflow", "resnet18", trainable(model), a, result, version=tf.__version__)


if __name__ == "__main__":
    main()
