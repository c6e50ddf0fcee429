"""An image folder (``data = folder``): what is in it, and the host-side
decoding and augmentation every Python worker's loader applies.

Layout, the same rule the studio uses to count classes (``crates/app``'s
``folder_classes``):

* ``DIR/train/<class>/*`` — training images; held out: ``DIR/val/<class>/*``
  if that folder exists, else every tenth image of each class;
* otherwise ``DIR/<class>/*``, every tenth image of each class held out.

Classes are the sorted names of the non-hidden sub-folders, images the files
ending in .jpg, .jpeg or .png (any case), sorted by name. At most
``EVAL_MAX`` held-out images are kept (evenly spaced), decoded once before
training.

Training images: torchvision's RandomResizedCrop (scale 0.25–1, aspect
3/4–4/3, ten tries, then a centre crop), a horizontal flip with probability
½, scaled to [0, 1] and normalised with ImageNet's mean and deviation.
Held-out images: the shorter side resized to ``size × 8/7`` and a centre
crop of ``size``. A sample's randomness depends only on (seed, epoch,
position in the data set), so any number of loader workers produces the same
batches.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .protocol import WorkerError, bad_config

if TYPE_CHECKING:
    from collections import deque
    from concurrent.futures import Future

    from PIL.Image import Image

# A decoded image, HWC float32.
Pixels = npt.NDArray[np.float32]

EXTENSIONS = (".jpg", ".jpeg", ".png")
EVAL_MAX = 1024
HOLD_OUT_EVERY = 10
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)
SCALE = (0.25, 1.0)
RATIO = (3 / 4, 4 / 3)


def _classes(root: str) -> list[str]:
    try:
        names = sorted(e.name for e in os.scandir(root) if e.is_dir() and not e.name.startswith("."))
    except OSError as e:
        raise bad_config(f"data_path = {root} cannot be read: {e}", "data_path") from e
    return names


def _images(folder: str) -> list[str]:
    return sorted(
        os.path.join(folder, e.name) for e in os.scandir(folder) if e.is_file() and e.name.lower().endswith(EXTENSIONS)
    )


class Folder:
    """The files and labels of an image folder, split for training and evaluation."""

    def __init__(self, path: str, num_classes: int) -> None:
        if not os.path.isdir(path):
            raise bad_config(
                f"data_path = {path} is not a directory: expected an image folder "
                "(train/<class>/ and val/<class>/, or <class>/)",
                "data_path",
            )
        train_root = os.path.join(path, "train")
        split = os.path.isdir(train_root)
        root = train_root if split else path
        self.classes = _classes(root)
        if len(self.classes) < 2:
            raise bad_config(
                f"data_path = {path}: {len(self.classes)} class folder(s) under {root}; "
                "expected at least 2 (one folder of images per class)",
                "data_path",
            )
        if num_classes != len(self.classes):
            raise bad_config(
                f"num_classes = {num_classes} is not allowed: {root} has {len(self.classes)} class folders; "
                f"expected {len(self.classes)}",
                "num_classes",
            )
        val_root = os.path.join(path, "val") if split else None
        has_val = val_root is not None and os.path.isdir(val_root)
        self.train_files: list[str] = []
        self.train_labels: list[int] = []
        eval_files: list[str] = []
        eval_labels: list[int] = []
        for label, name in enumerate(self.classes):
            files = _images(os.path.join(root, name))
            if not files:
                raise bad_config(
                    f"data_path = {path}: class folder {name} holds no .jpg, .jpeg or .png file", "data_path"
                )
            if has_val:
                assert val_root is not None  # has_val: it exists
                self.train_files += files
                self.train_labels += [label] * len(files)
                held = _images(os.path.join(val_root, name)) if os.path.isdir(os.path.join(val_root, name)) else []
            else:
                held = files[HOLD_OUT_EVERY - 1 :: HOLD_OUT_EVERY]
                kept = [f for i, f in enumerate(files) if (i + 1) % HOLD_OUT_EVERY != 0]
                self.train_files += kept
                self.train_labels += [label] * len(kept)
            eval_files += held
            eval_labels += [label] * len(held)
        self.eval_total = len(eval_files)
        if self.eval_total > EVAL_MAX:
            keep = np.linspace(0, self.eval_total - 1, EVAL_MAX).round().astype(int)
            eval_files = [eval_files[i] for i in keep]
            eval_labels = [eval_labels[i] for i in keep]
        self.eval_files, self.eval_labels = eval_files, eval_labels
        self.layout = (
            "train/ and val/"
            if has_val
            else f"train/, every {HOLD_OUT_EVERY}th image held out"
            if split
            else f"class folders, every {HOLD_OUT_EVERY}th image held out"
        )

    def labels(self) -> npt.NDArray[np.int64]:
        return np.asarray(self.train_labels, dtype=np.int64)


def sample_rng(seed: int, epoch: int, index: int) -> np.random.Generator:
    """The randomness of one training sample: the same in every loader worker."""
    return np.random.default_rng([int(seed), int(epoch), int(index)])


def crop_box(width: int, height: int, rng: np.random.Generator) -> tuple[int, int, int, int]:
    """torchvision's RandomResizedCrop box (left, top, right, bottom)."""
    area = width * height
    for _ in range(10):
        target = area * rng.uniform(*SCALE)
        aspect = math.exp(rng.uniform(math.log(RATIO[0]), math.log(RATIO[1])))
        w = int(round(math.sqrt(target * aspect)))
        h = int(round(math.sqrt(target / aspect)))
        if 0 < w <= width and 0 < h <= height:
            left = int(rng.integers(0, width - w + 1))
            top = int(rng.integers(0, height - h + 1))
            return left, top, left + w, top + h
    side = min(width, height)
    left, top = (width - side) // 2, (height - side) // 2
    return left, top, left + side, top + side


def _open(path: str) -> Image:
    from PIL import Image

    try:
        img = Image.open(path)
        img.draft("RGB", (img.width, img.height))
        return img.convert("RGB")
    except (OSError, ValueError) as e:
        raise WorkerError("bad_config", f"data_path: image {path} cannot be decoded: {e}", field="data_path") from e


def _normalise(img: Image, flip: bool) -> Pixels:
    a = np.asarray(img, dtype=np.float32) / 255.0
    if flip:
        a = a[:, ::-1]
    return (a - MEAN) / STD  # HWC


def train_image(path: str, size: int, rng: np.random.Generator) -> Pixels:
    """One augmented training image, HWC float32."""
    from PIL import Image

    img = _open(path)
    box = crop_box(img.width, img.height, rng)
    img = img.resize((size, size), Image.Resampling.BILINEAR, box=box)
    return _normalise(img, rng.random() < 0.5)


def eval_image(path: str, size: int) -> Pixels:
    """One held-out image, HWC float32: shorter side to size × 8/7, centre crop."""
    from PIL import Image

    img = _open(path)
    short = max(size, int(round(size * 8 / 7)))
    scale = short / min(img.width, img.height)
    w, h = max(size, int(round(img.width * scale))), max(size, int(round(img.height * scale)))
    img = img.resize((w, h), Image.Resampling.BILINEAR)
    left, top = (w - size) // 2, (h - size) // 2
    return _normalise(img.crop((left, top, left + size, top + size)), False)


def train_batch(
    files: Sequence[str],
    labels: Sequence[int] | npt.NDArray[np.int64],
    order: Sequence[int] | npt.NDArray[np.signedinteger[Any]],
    size: int,
    seed: int,
    epoch: int,
    channels_last: bool,
) -> tuple[Pixels, npt.NDArray[np.int64]]:
    """The training batch of the data-set positions ``order``: (images, labels)."""
    x = np.stack([train_image(files[i], size, sample_rng(seed, epoch, i)) for i in order])
    if not channels_last:
        x = x.transpose(0, 3, 1, 2)
    return np.ascontiguousarray(x), np.asarray([labels[i] for i in order], dtype=np.int64)


def eval_arrays(folder: Folder, size: int) -> tuple[Pixels, npt.NDArray[np.int64]]:
    """Every kept held-out image, NCHW float32, and its labels."""
    if not folder.eval_files:
        return (np.zeros((0, 3, size, size), np.float32), np.zeros((0,), np.int64))
    x = np.stack([eval_image(f, size) for f in folder.eval_files]).transpose(0, 3, 1, 2)
    return np.ascontiguousarray(x), np.asarray(folder.eval_labels, dtype=np.int64)


class HostBatch:
    """A batch decoded on the host (the part of the global batch this process
    trains), as the loader delivered it: framework arrays or NumPy."""

    __slots__ = ("x", "y")

    def __init__(self, x: Any, y: Any) -> None:
        self.x, self.y = x, y


class ThreadLoader:
    """The NumPy pipeline (JAX's): ``workers`` threads each decode whole
    batches (Pillow releases the GIL while it decodes and resizes), up to
    two batches per worker decoded ahead, delivered in order. With 0 workers
    the training thread decodes each batch when it asks for it."""

    def __init__(
        self,
        make_batch: Callable[[npt.NDArray[np.signedinteger[Any]], int], HostBatch],
        orders: Iterator[tuple[npt.NDArray[np.signedinteger[Any]], int]],
        workers: int,
    ) -> None:
        from collections import deque
        from concurrent.futures import ThreadPoolExecutor

        self.make_batch = make_batch
        self.orders = orders
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="trainbench-loader") if workers else None
        self.ahead: deque[Future[HostBatch]] = deque()
        self.depth = 2 * workers

    def __iter__(self) -> ThreadLoader:
        return self

    def __next__(self) -> HostBatch:
        if self.pool is None:
            return self.make_batch(*next(self.orders))
        while len(self.ahead) < self.depth:
            self.ahead.append(self.pool.submit(self.make_batch, *next(self.orders)))
        return self.ahead.popleft().result()

    def close(self) -> None:
        if self.pool is not None:
            for f in self.ahead:
                f.cancel()
            self.pool.shutdown(wait=True, cancel_futures=True)
