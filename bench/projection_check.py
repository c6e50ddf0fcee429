"""Benchmark: the projection method checked where it can be measured here.

Runs each model on this CPU with 1 compute thread and with 2, alternating
(1, 2, 1, 2, …) `--repeats` times through `trainbench run`, projects every
1-thread run to 2 threads with `trainbench project RUN --threads 2` (the
step's parts: compute-bound time up to twice as fast, memory-bound time held)
and compares with the 2-thread run measured right after it: whether the
measurement falls inside the projected band, and the middle's error.

    python bench/projection_check.py [--models resnet_mini,vit_mini_patch4_32] [--repeats 3] [--framework pytorch]

Needs target/release/trainbench (`make build-cli`), or --cli PATH.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cli, db, framework, model, threads, steps):
    out = subprocess.run(
        [
            cli,
            "--db",
            db,
            "run",
            "--framework",
            framework,
            "--model",
            model,
            "--batch-size",
            "32",
            "--steps",
            str(steps),
            "--window-steps",
            "5",
            "--threads",
            str(threads),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, OMP_NUM_THREADS=str(threads)),
    )
    if out.returncode != 0:
        sys.exit(f"{model} at {threads} threads failed: {out.stderr[-1500:]}")
    r = json.loads(out.stdout)["runs"][0]
    return r["id"], r["throughput_samples_per_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet_mini,vit_mini_patch4_32")
    ap.add_argument("--framework", default="pytorch")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--cli", default=os.path.join(ROOT, "target", "release", "trainbench"))
    a = ap.parse_args()
    db = os.path.join(tempfile.mkdtemp(prefix="projection-check-"), "runs.sqlite")
    print(
        "| model | 1 thread, measured | projected to 2 threads (low – high, middle) | 2 threads, measured | inside | middle's error |"
    )
    print("|---|---:|---|---:|---|---:|")
    errors = []
    for _rep in range(a.repeats):
        for model in a.models.split(","):
            one, rate1 = run(a.cli, db, a.framework, model, 1, a.steps)
            _, rate2 = run(a.cli, db, a.framework, model, 2, a.steps)
            p = subprocess.run(
                [a.cli, "--db", db, "project", str(one), "--threads", "2", "--json"],
                capture_output=True,
                text=True,
                check=True,
            )
            b = json.loads(p.stdout)["samples_per_s"]
            inside = b["low"] <= rate2 <= b["high"]
            err = rate2 / b["mid"] - 1
            errors.append(err)
            print(
                f"| {model} | {rate1:.1f} | {b['low']:.1f} – {b['high']:.1f}, {b['mid']:.1f} | {rate2:.1f} | "
                f"{'yes' if inside else 'NO'} | {100 * err:+.1f} % |"
            )
    print(
        f"\nmedian error of the middle: {100 * statistics.median(errors):+.1f} %; "
        f"largest: {100 * max(errors, key=abs):+.1f} %"
    )


if __name__ == "__main__":
    main()
