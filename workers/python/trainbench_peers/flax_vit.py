"""A ViT trained the way a Flax user writes it, without the studio: Flax
linen's own layers at their defaults (``nn.MultiHeadDotProductAttention``,
``nn.LayerNorm``, ``nn.Dense``), optax AdamW, one ``jax.jit`` step; for
amp-bf16 the modules compute in bfloat16 (``dtype``) over float32 parameters,
as Flax's examples do. The architecture is timm's (class token, learned
positions, pre-norm blocks, LayerNorm eps 1e-6, exact GELU, head on the class
token), so the parameter count equals the studio's."""

import time

# timm's shapes: patch, width, depth, heads, MLP width, pixels.
VIT_SHAPES = {
    "vit_tiny_patch16_224": (16, 192, 12, 3, 768, 224),
    "vit_small_patch16_224": (16, 384, 12, 6, 1536, 224),
    "vit_base_patch16_224": (16, 768, 12, 12, 3072, 224),
    "vit_large_patch16_224": (16, 1024, 24, 16, 4096, 224),
    "vit_mini_patch4_32": (4, 96, 4, 3, 384, 32),
}


def _device(jax, a):
    """The GPU, or the CPU with ``a.threads`` compute threads: XLA sizes its
    pool from the cores the process may use when the backend starts, so the
    affinity is narrowed for that moment (as the studio's JAX worker does)."""
    import os

    if a.device.startswith("cuda"):
        return jax.devices("gpu")[0]
    jax.config.update("jax_platforms", "cpu")
    allowed = sorted(os.sched_getaffinity(0))
    if not a.threads or a.threads >= len(allowed):
        return jax.devices("cpu")[0]
    os.sched_setaffinity(0, allowed[: a.threads])
    try:
        return jax.devices("cpu")[0]
    finally:
        for tid in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(tid), allowed)
            except OSError:
                pass


def run(a, measure):
    """Trains ``a.model`` per the arguments; ``measure(step, wait)`` times it.
    Returns the fields of the peer's report."""
    import flax
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax

    if a.model not in VIT_SHAPES:
        raise SystemExit(f"model = {a.model} is not allowed: expected one of {', '.join(VIT_SHAPES)}")
    if a.precision == "amp-fp16":
        raise SystemExit("precision = amp-fp16 is not allowed for the Flax peer: expected fp32, tf32 or amp-bf16")
    patch, dim, depth, heads, mlp, default_px = VIT_SHAPES[a.model]
    px = a.image_size or default_px
    practice = []
    if a.precision in ("fp32", "tf32"):
        jax.config.update("jax_default_matmul_precision", "highest" if a.precision == "fp32" else "tensorfloat32")
        practice.append(f"jax_default_matmul_precision={'highest' if a.precision == 'fp32' else 'tensorfloat32'}")
    dtype = jnp.bfloat16 if a.precision == "amp-bf16" else jnp.float32
    if dtype == jnp.bfloat16:
        practice.append("Flax modules with dtype bfloat16, float32 parameters")
    practice.append("Flax linen nn.MultiHeadDotProductAttention, optax.adamw, one jax.jit step")

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            y = nn.LayerNorm(epsilon=1e-6, dtype=dtype)(x)
            x = x + nn.MultiHeadDotProductAttention(num_heads=heads, dtype=dtype)(y, y)
            y = nn.LayerNorm(epsilon=1e-6, dtype=dtype)(x)
            y = nn.gelu(nn.Dense(mlp, dtype=dtype)(y), approximate=False)
            return x + nn.Dense(x.shape[-1], dtype=dtype)(y)

    class ViT(nn.Module):
        @nn.compact
        def __call__(self, images):
            x = nn.Conv(dim, (patch, patch), strides=(patch, patch), dtype=dtype)(images)
            b, h, w, d = x.shape
            x = x.reshape(b, h * w, d)
            cls = self.param("cls", nn.initializers.zeros, (1, 1, d))
            x = jnp.concatenate([jnp.broadcast_to(cls, (b, 1, d)).astype(x.dtype), x], axis=1)
            x = x + self.param("pos", nn.initializers.normal(0.02), (1, h * w + 1, d))
            for _ in range(depth):
                x = Block()(x)
            return nn.Dense(a.num_classes, dtype=dtype)(nn.LayerNorm(epsilon=1e-6, dtype=dtype)(x)[:, 0])

    device = _device(jax, a)
    rng = np.random.default_rng(0)
    with jax.default_device(device):
        model = ViT()
        images = jnp.asarray(rng.standard_normal((a.batch, px, px, 3), dtype=np.float32))
        labels = jnp.asarray(rng.integers(0, a.num_classes, a.batch))
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

        started = time.perf_counter()
        result = measure(step, lambda loss: float(loss.block_until_ready()))
    count = sum(int(np.prod(p.shape)) for p in jax.tree_util.tree_leaves(state[0]))
    return {
        "library_version": f"flax {flax.__version__}",
        "framework_version": f"jax {jax.__version__}",
        "params": count,
        "image_size": px,
        "device_name": device.device_kind,
        "practice": practice,
        "first_s": round(time.perf_counter() - started, 3),
        **result,
    }
