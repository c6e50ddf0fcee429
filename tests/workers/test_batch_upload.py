"""A training step's sample indices reach a GPU without a host-device
synchronisation. Copying a pageable host tensor to a GPU is PyTorch's
``cudaMemcpyAsync`` followed by ``cudaStreamSynchronize``: the worker's host
waited at every step for the previous step's kernels, which a plain training
loop (the timm and Hugging Face peers) never does. This machine has no GPU,
so the CUDA branch is checked on what it asks of the tensor (pinned, then a
non-blocking copy), and the CPU branch on real tensors."""

import numpy as np
import torch
from trainbench_worker.torch_feed import to_device


class _Recorder:
    """Stands in for the index tensor: records what the upload asks of it."""

    def __init__(self):
        self.calls = []

    def pin_memory(self):
        self.calls.append("pin_memory")
        return self

    def to(self, device, non_blocking=False):
        self.calls.append(("to", device, non_blocking))
        return self


def test_indices_go_to_a_gpu_pinned_and_without_waiting():
    t = _Recorder()
    assert to_device(t, "cuda:0", cuda=True) is t
    assert t.calls == ["pin_memory", ("to", "cuda:0", True)]


def test_indices_on_the_cpu_stay_as_they_are():
    idx = torch.from_numpy(np.array([3, 1, 2], dtype=np.int64))
    out = to_device(idx, torch.device("cpu"), cuda=False)
    assert out.tolist() == [3, 1, 2] and out.device.type == "cpu"
