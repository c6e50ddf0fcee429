"""The JAX worker builds its state as JAX users write a jitted init: the
random key is the compiled function's argument, not a constant made inside
it. A key made inside makes every initializer's output a compile-time
constant, which XLA may then try to fold while compiling; a GPU session saw
the GPT-2 small init take minutes to compile there. Run with the JAX
environment's Python (the PyTorch one, which runs these tests, has no JAX)."""

import json
import os
import subprocess

from conftest import ROOT, saved_plan
from test_nnx_bridge import _jax_python

SCRIPT = r"""
import json, sys, jax
from trainbench_worker import jax_worker
from trainbench_worker.harness import Plan

seen = []
real_jit = jax.jit

def recording_jit(fun, *args, **kwargs):
    jitted = real_jit(fun, *args, **kwargs)
    if getattr(fun, "__name__", "") != "_init_state":
        return jitted

    def call(*a, **k):
        seen.append(jitted.lower(*a, **k).as_text())
        return jitted(*a, **k)

    return call

jax.jit = recording_jit
backend = jax_worker.JaxBackend(Plan(json.loads(sys.stdin.read())))
text = seen[0]
main = next(line for line in text.splitlines() if "func.func public @main" in line)
print(json.dumps({"inits": len(seen), "main": main, "params": backend.params}))
"""


def test_the_jitted_init_takes_the_key_as_its_argument():
    plan = saved_plan("gpt2_tiny")
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "workers", "python"), "JAX_PLATFORMS": "cpu"}
    out = subprocess.run(
        [_jax_python(), "-c", SCRIPT], input=json.dumps(plan), capture_output=True, text=True, timeout=300, env=env
    )
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["inits"] == 1, got
    # The key (two 32-bit words, or a typed key) comes in as the one argument.
    assert "%arg0" in got["main"] and "%arg1" not in got["main"], got["main"]
    assert got["params"] == plan["param_count"], got
