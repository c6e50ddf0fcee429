"""What the PyTorch worker feeds its model: the in-memory split moved to the
device once, an image folder through ``torch.utils.data.DataLoader`` (this
process's part of each global batch, in the harness's order), and the
held-out split it evaluates on."""

import numpy as np
import torch
import torch.utils.data

from . import images
from .harness import eval_batch, inputs_and_targets
from .images import HostBatch
from .protocol import WorkerError
from .torch_models import classification_loss, predicted_classes


def to_device(t, device, cuda):
    """A step's small host tensor (the batch's sample indices) on the device
    without waiting for the GPU. A pageable tensor's copy to a GPU is
    ``cudaMemcpyAsync`` then ``cudaStreamSynchronize``: the host would wait at
    every step for the previous step's kernels, where a plain loop's host
    runs ahead of its GPU. Pinned, the copy is queued like a kernel, and
    PyTorch's pinned-memory cache keeps the buffer until the copy is done."""
    if cuda:
        return t.pin_memory().to(device, non_blocking=True)
    return t.to(device)


class _FolderImages(torch.utils.data.Dataset):
    """Training images of a folder, keyed by (position, epoch): a sample's
    augmentation depends on nothing else (``images.sample_rng``)."""

    def __init__(self, files, labels, size, seed):
        self.files, self.labels, self.size, self.seed = files, labels, size, seed

    def __len__(self):
        return len(self.files)

    def __getitem__(self, key):
        """(image CHW, label, "") or, for a file that cannot be decoded,
        (zeros, label, why): DataLoader would re-raise a worker's exception
        as a RuntimeError without its class and field, so the error travels
        with the batch and the training process raises it."""
        i, epoch = key
        try:
            x = images.train_image(self.files[i], self.size, images.sample_rng(self.seed, epoch, i))
        except WorkerError as e:
            return torch.zeros(3, self.size, self.size), self.labels[i], e.message
        return torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1))), self.labels[i], ""


class _Orders:
    """DataLoader's batch sampler: this rank's part of every global batch,
    in the harness's order, without end."""

    def __init__(self, data, rank, per_rank):
        self.data, self.rank, self.per_rank = data, rank, per_rank

    def __iter__(self):
        for idx, epoch in self.data.orders(self.rank, self.per_rank):
            yield [(int(i), epoch) for i in idx]


class _Stream:
    def __init__(self, it):
        self.it = it

    def __iter__(self):
        return self

    def __next__(self):
        x, y, errors = next(self.it)
        for why in errors:
            if why:
                raise WorkerError("bad_config", why, field="data_path")
        return HostBatch(x, y)

    def close(self):
        shutdown = getattr(self.it, "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()


class TorchFeed:
    """The data half of :class:`~.torch_worker.TorchBackend`: ``set_data``
    and the batches of each step, ``evaluate`` on the held-out split. Reads
    the backend's ``plan``, ``device``, ``rank``, ``autocast``, ``raw`` and
    ``dist``."""

    def set_data(self, data):
        if data.streamed:
            self._set_stream(data)
        else:
            x, y = data.train
            self.x = torch.from_numpy(x).to(self.device)
            self.y = torch.from_numpy(y).to(self.device)
        if data.eval is not None:
            self.ex = torch.from_numpy(data.eval[0]).to(self.device)
            self.ey = torch.from_numpy(data.eval[1]).to(self.device)
        if self.plan.traits.tokens:
            self.x = self.x.long()
            if data.eval is not None:
                self.ex = self.ex.long()

    def _set_stream(self, data):
        """An image folder through torch.utils.data.DataLoader: each of
        ``loader_workers`` processes decodes and augments whole batches (this
        process's part of each global batch, in the harness's order)."""
        from torch.utils.data import DataLoader

        n = int(self.plan.loader_workers)
        files, labels = data.train
        dataset = _FolderImages(files, labels.tolist(), int(self.plan.config["image_size"]), self.plan.seed)
        loader = DataLoader(
            dataset,
            batch_sampler=_Orders(data, self.rank, self.plan.batch_size),
            num_workers=n,
            pin_memory=self.plan.is_cuda,
            persistent_workers=n > 0,
            prefetch_factor=2 if n else None,
        )
        where = (
            f"{n} worker process{'es' if n > 1 else ''}, 2 batches ahead each"
            if n
            else "in the training process (num_workers = 0)"
        )
        data.attach(
            _Stream(iter(loader)),
            f"torch.utils.data.DataLoader, {where}; Pillow decode, RandomResizedCrop, flip, normalise"
            + ("; pinned memory" if self.plan.is_cuda else ""),
        )

    def _batch(self, idx):
        if isinstance(idx, HostBatch):
            return idx.x.to(self.device, non_blocking=True), idx.y.to(self.device, non_blocking=True)
        b = self.plan.batch_size
        local = to_device(torch.from_numpy(idx[self.rank * b : (self.rank + 1) * b]), self.device, self.plan.is_cuda)
        return self.x.index_select(0, local), self.y.index_select(0, local)

    @torch.no_grad()
    def evaluate(self):
        """Accuracy and mean loss on the held-out split; for a decoder, over
        every next-token prediction (next-token accuracy, loss per token)."""
        self.raw.eval()
        correct, total_loss, n = 0, 0.0, self.ey.shape[0]
        predictions = 0
        step = eval_batch(self.plan)
        for s in range(0, n, step):
            x, y = inputs_and_targets(self.plan, self.ex[s : s + step], self.ey[s : s + step])
            if self.autocast is not None:
                with torch.autocast(self.device.type, dtype=self.autocast):
                    out = self.raw(x)
            else:
                out = self.raw(x)
            out = out.float()
            total_loss += classification_loss(out, y, self.plan.traits.binary, reduction="sum").item()
            correct += (predicted_classes(out, self.plan.traits.binary) == y).sum().item()
            predictions += y.numel()
        self.raw.train()
        result = torch.tensor([correct / predictions, total_loss / predictions], dtype=torch.float64)
        if self.dist is not None:  # every rank acts on rank 0's evaluation
            self.dist.broadcast(result, 0)
        return float(result[0]), float(result[1]), n
