"""The studio's ViT is timm's VisionTransformer at its defaults, written
alike: a training step (forward and backward) of each runs the same
operators, as many times. Splitting the fused QKV projection by indexing
instead of timm's ``unbind`` added, per block, a zero-filled copy of the
whole projection for each of the three parts and two sums of them in the
backward: work the GPU does at every step that timm's model does not."""

import collections

import timm
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from trainbench_worker import torch_models

# The same small ViT twice: the studio's configuration and timm's arguments.
SIZE = dict(image_size=32, patch_size=8, embed_dim=64, depth=2, num_heads=4, num_classes=10)
CONFIG = dict(family="vit", in_channels=3, mlp_hidden=128, **SIZE)
TIMM = dict(img_size=32, mlp_ratio=2.0, **{k: v for k, v in SIZE.items() if k != "image_size"})


class _Ops(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.count = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count[func.overloadpacket.__name__] += 1
        return func(*args, **(kwargs or {}))


def _step_ops(model):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 32, 32)
    with _Ops() as ops:
        model(x).sum().backward()
    return ops.count


def test_the_studio_vit_runs_timms_operators():
    ours = torch_models.Vit(CONFIG)
    theirs = timm.create_model("vit_base_patch16_224", pretrained=False, **TIMM)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in theirs.parameters())
    got, want = _step_ops(ours), _step_ops(theirs)
    assert got["select_backward"] == want["select_backward"], got
    assert got == want, {k: (got[k], want[k]) for k in set(got) | set(want) if got[k] != want[k]}
