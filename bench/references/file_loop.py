"""A person's model file trained in a plain loop of its framework, as its
users write one: `build()` from the file, AdamW, cross-entropy on random
images, PyTorch eager (NCHW), Keras `train_on_batch` (NHWC), or a `jax.jit`
step with optax (NHWC). Nothing from the studio.

    python bench/references/file_loop.py pytorch|tensorflow|jax FILE.py \
        [--image 32] [--batch 32] [--steps 20] [--warmup 4] [--window 4] [--threads 1]
"""

import importlib.util
import sys

import numpy as np
from timing import arguments, measure, report


def load(path):
    spec = importlib.util.spec_from_file_location("user_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()


def pytorch(path, a):
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = load(path).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.05)
    x = torch.randn(a.batch, 3, a.image, a.image)
    y = torch.randint(0, a.classes, (a.batch,))

    def step():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    result = measure(step, lambda loss: loss.item(), a)
    return sum(p.numel() for p in model.parameters()), result, torch.__version__


def tensorflow(path, a):
    import keras
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(a.threads)
    tf.config.threading.set_inter_op_parallelism_threads(a.threads)
    model = load(path)
    model.compile(
        optimizer=keras.optimizers.AdamW(1e-3, weight_decay=0.05, beta_1=0.9, beta_2=0.999, epsilon=1e-8),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    rng = np.random.default_rng(0)
    x = rng.standard_normal((a.batch, a.image, a.image, 3), dtype=np.float32)
    y = rng.integers(0, a.classes, a.batch)
    result = measure(lambda: model.train_on_batch(x, y), lambda _: None, a)
    return sum(int(np.prod(w.shape)) for w in model.trainable_weights), result, tf.__version__


def jax(path, a):
    import jax
    import jax.numpy as jnp
    import optax

    model = load(path)
    rng = np.random.default_rng(0)
    images = jnp.asarray(rng.standard_normal((a.batch, a.image, a.image, 3), dtype=np.float32))
    labels = jnp.asarray(rng.integers(0, a.classes, a.batch))
    params = model.init(jax.random.PRNGKey(0), images)["params"]
    tx = optax.adamw(1e-3, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.05)
    state = [params, tx.init(params)]

    @jax.jit
    def train_step(params, opt, x, y):
        def loss_fn(p):
            return optax.softmax_cross_entropy_with_integer_labels(model.apply({"params": p}, x), y).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt = tx.update(grads, opt, params)
        return optax.apply_updates(params, updates), opt, loss

    def step():
        p, o, loss = train_step(state[0], state[1], images, labels)
        state[:] = [p, o]
        return loss

    result = measure(step, lambda loss: loss.block_until_ready(), a)
    count = sum(int(np.prod(p.shape)) for p in jax.tree_util.tree_leaves(state[0]))
    return count, result, jax.__version__


def main():
    ap = arguments(batch=32)
    ap.add_argument("framework", choices=["pytorch", "tensorflow", "jax"])
    ap.add_argument("file")
    ap.add_argument("--image", type=int, default=32)
    a = ap.parse_args()
    params, result, version = {"pytorch": pytorch, "tensorflow": tensorflow, "jax": jax}[a.framework](a.file, a)
    report(a.framework, a.file, params, a, result, version=version)


if __name__ == "__main__":
    sys.exit(main())
