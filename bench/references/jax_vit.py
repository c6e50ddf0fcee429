"""ViT-Tiny/16 trained the way a Flax user writes it, without the studio:
Flax linen's own layers at their defaults (``nn.MultiHeadDotProductAttention``,
``nn.LayerNorm``, ``nn.Dense``), optax AdamW, one ``jax.jit`` step. The
architecture is timm's ``vit_tiny_patch16_224`` (class token, learned
positions, pre-norm blocks, LayerNorm eps 1e-6, exact GELU, head on the class
token), so the parameter count equals the studio's: 5,526,346 with 10
classes.

    python bench/references/jax_vit.py [--batch 8] [--steps 20] [--warmup 4]

Prints one JSON line: parameters and the median window's samples/s.
"""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from timing import arguments, measure, report


class Block(nn.Module):
    heads: int
    mlp: int

    @nn.compact
    def __call__(self, x):
        y = nn.LayerNorm(epsilon=1e-6)(x)
        x = x + nn.MultiHeadDotProductAttention(num_heads=self.heads)(y, y)
        y = nn.LayerNorm(epsilon=1e-6)(x)
        y = nn.Dense(self.mlp)(y)
        y = nn.gelu(y, approximate=False)
        return x + nn.Dense(x.shape[-1])(y)


class ViT(nn.Module):
    classes: int
    dim: int = 192
    depth: int = 12
    heads: int = 3
    mlp: int = 768
    patch: int = 16

    @nn.compact
    def __call__(self, images):
        x = nn.Conv(self.dim, (self.patch, self.patch), strides=(self.patch, self.patch))(images)
        b, h, w, d = x.shape
        x = x.reshape(b, h * w, d)
        cls = self.param("cls", nn.initializers.zeros, (1, 1, d))
        x = jnp.concatenate([jnp.broadcast_to(cls, (b, 1, d)), x], axis=1)
        x = x + self.param("pos", nn.initializers.normal(0.02), (1, h * w + 1, d))
        for _ in range(self.depth):
            x = Block(self.heads, self.mlp)(x)
        return nn.Dense(self.classes)(nn.LayerNorm(epsilon=1e-6)(x)[:, 0])


def main():
    a = arguments(batch=8).parse_args()
    model = ViT(classes=a.classes)
    rng = np.random.default_rng(0)
    images = jnp.asarray(rng.standard_normal((a.batch, 224, 224, 3), dtype=np.float32))
    labels = jnp.asarray(rng.integers(0, a.classes, a.batch))
    params = model.init(jax.random.PRNGKey(0), images)
    tx = optax.adamw(1e-3, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.05)
    state = [params, tx.init(params)]

    @jax.jit
    def train_step(params, opt, x, y):
        def loss_fn(p):
            logits = model.apply(p, x)
            return optax.softmax_cross_entropy_with_integer_labels(logits.astype(jnp.float32), y).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt = tx.update(grads, opt, params)
        return optax.apply_updates(params, updates), opt, loss

    def step():
        state[0], state[1], loss = train_step(state[0], state[1], images, labels)
        return loss

    result = measure(step, lambda loss: loss.block_until_ready(), a)
    count = sum(int(np.prod(p.shape)) for p in jax.tree_util.tree_leaves(state[0]))
    report("jax", "vit_tiny_patch16_224", count, a, result, version=jax.__version__)


if __name__ == "__main__":
    main()
