"""A Flax NNX module carried by ``nnx_bridge`` as the JAX worker trains it:
its parameters are the ones AdamW sees, batch statistics update in a training
step and stay in an evaluation, dropout draws a new mask each training step
and none in an evaluation. Run with the JAX environment's Python (the
PyTorch one, which runs these tests, has no JAX)."""

import os
import re
import subprocess

from conftest import ROOT

SCRIPT = r"""
import jax, jax.numpy as jnp
from flax import nnx
from trainbench_worker import nnx_bridge

class Net(nnx.Module):
    def __init__(self, rngs):
        self.conv = nnx.Conv(3, 8, (3, 3), rngs=rngs)
        self.bn = nnx.BatchNorm(8, rngs=rngs)
        self.drop = nnx.Dropout(0.5, rngs=rngs)
        self.out = nnx.Linear(8, 5, rngs=rngs)

    def __call__(self, x):
        return self.out(self.drop(nnx.relu(self.bn(self.conv(x))).mean(axis=(1, 2))))

net = Net(nnx.Rngs(0))
assert nnx_bridge.is_nnx(net) and nnx_bridge.has_params(net)
assert not nnx_bridge.is_nnx(object())
want = sum(a.size for a in jax.tree.leaves(nnx.state(net, nnx.Param)))
m = nnx_bridge.as_linen(net)
x = jax.random.normal(jax.random.PRNGKey(1), (4, 6, 6, 3))
v = m.init(jax.random.PRNGKey(0), x)
assert sum(a.size for a in jax.tree.leaves(v["params"])) == want, "parameters"
state = {k: s for k, s in v.items() if k != "params"}

def loss(p, state):
    y, upd = m.apply({"params": p, **state}, x, train=True, mutable=["batch_stats"])
    return (y ** 2).mean(), upd

g, upd = jax.jit(jax.grad(loss, has_aux=True))(v["params"], state)
assert jax.tree.structure(g) == jax.tree.structure(v["params"]), "gradient tree"
assert any(float(jnp.abs(a).sum()) > 0 for a in jax.tree.leaves(g)), "gradients"
before, after = state["batch_stats"]["nnx"], upd["batch_stats"]["nnx"]
assert float(jnp.abs(after["bn"]["mean"] - before["bn"]["mean"]).sum()) > 0, "running mean updated"
count = lambda s: int(s["drop"]["rngs"]["count"])
assert count(after) == count(before) + 1, "dropout stream advanced"
y1, _ = m.apply({"params": v["params"], **state}, x, train=True, mutable=["batch_stats"])
y2, _ = m.apply({"params": v["params"], **upd}, x, train=True, mutable=["batch_stats"])
assert float(jnp.abs(y1 - y2).max()) > 0, "a new dropout mask each step"
e1 = m.apply({"params": v["params"], **state}, x, train=False)
e2 = m.apply({"params": v["params"], **state}, x, train=False)
assert float(jnp.abs(e1 - e2).max()) == 0, "no dropout in an evaluation"
print("ok", want)
"""


def _jax_python():
    pin = open(os.path.join(ROOT, "envs", "jax.txt"), encoding="utf-8").read()
    version = re.search(r"^jax\[cpu\]==(\S+)", pin, re.M).group(1)
    home = os.environ.get("TRAINBENCH_HOME") or os.path.expanduser("~/.local/share/trainbench")
    return os.path.join(home, "envs", f"jax-{version}", "bin", "python")


def test_an_nnx_module_trains_as_linen_with_its_state_and_dropout():
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "workers", "python"), "JAX_PLATFORMS": "cpu"}
    out = subprocess.run([_jax_python(), "-c", SCRIPT], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["ok", "285"], out.stdout
