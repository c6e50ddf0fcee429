"""Writes an image folder of generated JPEGs for the loader benchmark (no
data set needed): OUT/<class>/NNNNN.jpg, each a smooth random colour field
with noise, so decoding and augmentation do real work.

    python -m trainbench_peers.images OUT [--classes 10] [--per-class 64] [--size 256]
"""

import argparse
import os

import numpy as np
from PIL import Image


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m trainbench_peers.images")
    ap.add_argument("out")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--per-class", type=int, default=64)
    ap.add_argument("--size", type=int, default=256)
    a = ap.parse_args(argv)
    for field in ("classes", "per_class", "size"):
        if getattr(a, field) < 1:
            ap.error(f"{field} = {getattr(a, field)} is not allowed: expected a whole number ≥ 1")
    rng = np.random.default_rng(0)
    ramp = np.linspace(0.0, 1.0, a.size, dtype=np.float32)
    for c in range(a.classes):
        folder = os.path.join(a.out, f"class{c:02d}")
        os.makedirs(folder, exist_ok=True)
        for i in range(a.per_class):
            base = rng.uniform(0, 255, size=3).astype(np.float32)
            tilt = rng.uniform(-80, 80, size=(2, 3)).astype(np.float32)
            field = base + ramp[:, None, None] * tilt[0] + ramp[None, :, None] * tilt[1]
            field += rng.normal(0, 12, size=(a.size, a.size, 3)).astype(np.float32)
            img = Image.fromarray(np.clip(field, 0, 255).astype(np.uint8), "RGB")
            img.save(os.path.join(folder, f"{i:05d}.jpg"), quality=90)
    print(f"{a.classes * a.per_class} images in {a.out}")


if __name__ == "__main__":
    main()
