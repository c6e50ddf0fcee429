"""A small GPT-2 as a Flax user writes it: ``nn.Embed`` for tokens and
positions, pre-norm blocks of ``nn.LayerNorm``, ``nn.MultiHeadDotProductAttention``
with a causal mask and attention dropout 0.1, a tanh-GELU MLP, dropout 0.1,
the head tied to the token embedding (``Embed.attend``); optax AdamW, one
``jax.jit`` step, the next-token loss over every position. 2 layers, width
128, 2 heads, vocabulary 256, 128 positions: 445,952 parameters, as the
studio's ``gpt2_tiny``. Samples are sequences of 128 tokens.

    python bench/references/jax_decoder.py [--batch 8] [--steps 20]
"""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from timing import arguments, measure, report

SEQ, VOCAB, WIDTH, LAYERS, HEADS = 128, 256, 128, 2, 2


class Block(nn.Module):
    @nn.compact
    def __call__(self, x, mask, train):
        y = nn.LayerNorm(epsilon=1e-5)(x)
        y = nn.MultiHeadDotProductAttention(num_heads=HEADS, dropout_rate=0.1, deterministic=not train)(y, y, mask=mask)
        x = x + nn.Dropout(0.1, deterministic=not train)(y)
        y = nn.gelu(nn.Dense(4 * WIDTH)(nn.LayerNorm(epsilon=1e-5)(x)), approximate=True)
        return x + nn.Dropout(0.1, deterministic=not train)(nn.Dense(WIDTH)(y))


class GPT(nn.Module):
    @nn.compact
    def __call__(self, ids, train=True):
        wte = nn.Embed(VOCAB, WIDTH, embedding_init=nn.initializers.normal(0.02))
        x = wte(ids) + nn.Embed(SEQ, WIDTH, embedding_init=nn.initializers.normal(0.02))(jnp.arange(ids.shape[1]))
        x = nn.Dropout(0.1, deterministic=not train)(x)
        mask = nn.make_causal_mask(ids)
        for _ in range(LAYERS):
            x = Block()(x, mask, train)
        return wte.attend(nn.LayerNorm(epsilon=1e-5)(x))


def main():
    a = arguments(batch=8).parse_args()
    model = GPT()
    rng = np.random.default_rng(0)
    tokens = jnp.asarray(rng.integers(0, VOCAB, (a.batch, SEQ + 1)))
    params = model.init(jax.random.PRNGKey(0), tokens[:, :-1], train=False)["params"]
    tx = optax.adamw(1e-3, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.05)
    state = [params, tx.init(params), 0]

    @jax.jit
    def train_step(params, opt, n, batch):
        def loss_fn(p):
            logits = model.apply(
                {"params": p}, batch[:, :-1], rngs={"dropout": jax.random.fold_in(jax.random.PRNGKey(1), n)}
            )
            return optax.softmax_cross_entropy_with_integer_labels(logits, batch[:, 1:]).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt = tx.update(grads, opt, params)
        return optax.apply_updates(params, updates), opt, loss

    def step():
        state[0], state[1], loss = train_step(state[0], state[1], state[2], tokens)
        state[2] += 1
        return loss

    result = measure(step, lambda loss: loss.block_until_ready(), a)
    count = sum(int(np.prod(p.shape)) for p in jax.tree_util.tree_leaves(state[0]))
    report("jax", "gpt2_tiny", count, a, result, version=jax.__version__)


if __name__ == "__main__":
    main()
