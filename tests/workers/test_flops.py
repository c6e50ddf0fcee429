"""Training FLOPs counted on a PyTorch model (`library_models.flops_per_sample`,
which timm and Hugging Face names and PyTorch model files use), against the
figures worked out by hand: a convolution's forward is 2 × its output's
positions × its weight's elements; its backward an input gradient of the same
work and a weight gradient of the same work, each group seeing its own
channels only (a layer whose input is the image computes no input gradient)."""

import torch
from trainbench_worker import library_models


def _loss(model, x):
    return model(x).float().pow(2).mean()


def _flops(model, shape):
    torch.manual_seed(0)
    return library_models.flops_per_sample(model, shape, _loss)


def test_a_depthwise_convolution_backward_is_twice_its_forward():
    # 8 → 64 channels, 3×3, on 56×56: the image's layer (forward + weight
    # gradient); then a depthwise 7×7 over the 64 channels (forward + input
    # gradient + weight gradient, each 2 × 64 × 1 × 49 × 3136).
    first = 2 * 64 * 8 * 9 * 56 * 56
    depthwise = 2 * 64 * 1 * 49 * 56 * 56
    model = torch.nn.Sequential(
        torch.nn.Conv2d(8, 64, 3, padding=1, bias=False),
        torch.nn.Conv2d(64, 64, 7, padding=3, groups=64, bias=False),
    )
    assert _flops(model, (8, 56, 56)) == 2 * first + 3 * depthwise


def test_a_grouped_transposed_convolution_counts_each_group_once():
    # A transposed 4×4 convolution in 4 groups (64 → 32 channels, 28 → 56
    # px): 2 × the input's 784 positions × its weight's 64 × 8 × 16 elements.
    first = 2 * 64 * 8 * 9 * 28 * 28
    transposed = 2 * 28 * 28 * 64 * 8 * 16
    model = torch.nn.Sequential(
        torch.nn.Conv2d(8, 64, 3, padding=1, bias=False),
        torch.nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1, groups=4, bias=False),
    )
    assert _flops(model, (8, 28, 28)) == 2 * first + 3 * transposed


def test_a_dense_convolution_is_unchanged():
    first = 2 * 64 * 8 * 9 * 56 * 56
    dense = 2 * 64 * 64 * 9 * 56 * 56
    model = torch.nn.Sequential(
        torch.nn.Conv2d(8, 64, 3, padding=1, bias=False),
        torch.nn.Conv2d(64, 64, 3, padding=1, bias=False),
    )
    assert _flops(model, (8, 56, 56)) == 2 * first + 3 * dense


JAX_SCRIPT = r"""
import json
import sys

import numpy as np
import optax
from flax import linen
from trainbench_worker import file_models
from trainbench_worker.harness import Plan


class Net(linen.Module):
    @linen.compact
    def __call__(self, x, train=False):
        x = linen.Conv(64, (3, 3), use_bias=False)(x)
        x = linen.Conv(64, (7, 7), feature_group_count=64, use_bias=False)(x)
        return linen.Dense(5, use_bias=False)(x.mean(axis=(1, 2)))


import jax

# The saved plan of a model file, as the studio sends it, for this input.
plan_json = json.loads(sys.argv[1])
plan_json["framework"] = "jax"
plan_json["spec"]["model_config"].update(in_channels=8, image_size=56, num_classes=5)
plan = Plan(plan_json)
plan.set_traits(file_models.input_kind(plan.config))
net = Net()
v = net.init(jax.random.PRNGKey(0), np.zeros((1, 56, 56, 8), np.float32))
file_models.flax_flops(plan, net, v, optax.softmax_cross_entropy_with_integer_labels)
print(int(plan.flops_per_sample))
"""


def test_a_depthwise_convolution_in_jax_is_counted_as_traced():
    # XLA counts only the positions a 3×3 or 7×7 window covers inside the
    # image (not the padding), and element-wise work: within 10 % of the
    # figure by hand, where the compiled program's analysis counted the
    # depthwise weight gradient 64 times (over 10 × the figure).
    import json
    import os
    import subprocess

    from conftest import ROOT, saved_plan
    from test_nnx_bridge import _jax_python

    first = 2 * 64 * 8 * 9 * 56 * 56
    depthwise = 2 * 64 * 1 * 49 * 56 * 56
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "workers", "python"), "JAX_PLATFORMS": "cpu"}
    plan = json.dumps(saved_plan("model_file"))
    out = subprocess.run([_jax_python(), "-c", JAX_SCRIPT, plan], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    counted = int(out.stdout.split()[-1])
    by_hand = 2 * first + 3 * depthwise
    assert 0.9 * by_hand < counted < 1.1 * by_hand, (counted, by_hand)
