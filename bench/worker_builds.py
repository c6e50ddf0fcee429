"""Benchmark: two builds of the libtorch worker on the same training run.

Issue 14 changed the release profile to build faster; this checks that the
worker's hot path did not lose throughput. It alternates the two binaries
(ABBA) `--repeats` times per model with the same spec (fp32, synthetic data,
one thread) and reports each build's median steady throughput across repeats
and the ratio B ÷ A, with the spread of the per-pair ratios.

    python bench/worker_builds.py --a OLD/trainbench-worker-tch --b target/release/trainbench-worker-tch
"""

import argparse
import statistics

# The same run and summary as the tch-vs-PyTorch benchmark, with the build chosen.
from tch_vs_python import run_tch


def run(worker, model, batch, steps, threads, window):
    return run_tch(model, batch, steps, threads, window, worker)["steady"]["median_samples_per_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="the worker binary before")
    ap.add_argument("--b", required=True, help="the worker binary after")
    ap.add_argument("--models", default="resnet_mini,vit_mini_patch4_32")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--window-steps", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=4)
    args = ap.parse_args()
    rows = []
    for model in args.models.split(","):
        a, b = [], []
        for r in range(args.repeats):
            order = ((a, args.a), (b, args.b))
            for into, worker in order if r % 2 == 0 else order[::-1]:
                into.append(run(worker, model, args.batch_size, args.steps, args.threads, args.window_steps))
            print(f"{model:<20} repeat {r + 1}: A {a[-1]:8.1f}  B {b[-1]:8.1f} samples/s", flush=True)
        ratios = [y / x for x, y in zip(a, b)]
        rows.append(
            (model, statistics.median(a), statistics.median(b), statistics.median(ratios), min(ratios), max(ratios))
        )
    print()
    print("| model | A samples/s | B samples/s | B ÷ A (median of pairs) | pair range |")
    print("|---|---:|---:|---:|---|")
    for model, ma, mb, r, lo, hi in rows:
        print(f"| {model} | {ma:.1f} | {mb:.1f} | {r:.3f} | {lo:.3f}–{hi:.3f} |")
    print(f"\nbatch {args.batch_size}, fp32, {args.threads} thread(s), {args.steps} steps, {args.repeats} ABBA repeats")


if __name__ == "__main__":
    main()
