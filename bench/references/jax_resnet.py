"""ResNet-18 as a Flax user writes it (the structure of Flax's ImageNet
example: ``nn.Conv`` without bias and 'SAME' padding, ``nn.BatchNorm`` with
momentum 0.9 and eps 1e-5 updating ``batch_stats``, the 7×7 stem and max
pool, NHWC), optax AdamW, one ``jax.jit`` step: 11,181,642 parameters at 10
classes, as the studio's ``resnet18``.

    python bench/references/jax_resnet.py [--batch 8] [--steps 20]
"""

from functools import partial

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from timing import arguments, measure, report


class BasicBlock(nn.Module):
    filters: int
    strides: int

    @nn.compact
    def __call__(self, x, train):
        norm = partial(nn.BatchNorm, use_running_average=not train, momentum=0.9, epsilon=1e-5)
        y = nn.Conv(self.filters, (3, 3), (self.strides, self.strides), use_bias=False)(x)
        y = nn.relu(norm()(y))
        y = norm()(nn.Conv(self.filters, (3, 3), use_bias=False)(y))
        if x.shape != y.shape:
            x = norm()(nn.Conv(self.filters, (1, 1), (self.strides, self.strides), use_bias=False)(x))
        return nn.relu(x + y)


class ResNet18(nn.Module):
    classes: int

    @nn.compact
    def __call__(self, x, train=True):
        x = nn.Conv(64, (7, 7), (2, 2), padding=[(3, 3), (3, 3)], use_bias=False)(x)
        x = nn.relu(nn.BatchNorm(use_running_average=not train, momentum=0.9, epsilon=1e-5)(x))
        x = nn.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")
        for i, width in enumerate([64, 128, 256, 512]):
            for j in range(2):
                x = BasicBlock(width, 2 if i > 0 and j == 0 else 1)(x, train)
        return nn.Dense(self.classes)(jnp.mean(x, axis=(1, 2)))


def main():
    a = arguments(batch=8).parse_args()
    model = ResNet18(a.classes)
    rng = np.random.default_rng(0)
    images = jnp.asarray(rng.standard_normal((a.batch, 224, 224, 3), dtype=np.float32))
    labels = jnp.asarray(rng.integers(0, a.classes, a.batch))
    variables = model.init(jax.random.PRNGKey(0), images, train=False)
    tx = optax.adamw(1e-3, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.05)
    state = [variables["params"], variables["batch_stats"], tx.init(variables["params"])]

    @jax.jit
    def train_step(params, stats, opt, x, y):
        def loss_fn(p):
            logits, updates = model.apply({"params": p, "batch_stats": stats}, x, mutable=["batch_stats"])
            loss = optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
            return loss, updates["batch_stats"]

        (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        updates, opt = tx.update(grads, opt, params)
        return optax.apply_updates(params, updates), stats, opt, loss

    def step():
        p, s, o, loss = train_step(state[0], state[1], state[2], images, labels)
        state[:] = [p, s, o]
        return loss

    result = measure(step, lambda loss: loss.block_until_ready(), a)
    count = sum(int(np.prod(p.shape)) for p in jax.tree_util.tree_leaves(state[0]))
    report("jax", "resnet18", count, a, result, version=jax.__version__)


if __name__ == "__main__":
    main()
