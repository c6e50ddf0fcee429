"""Benchmark: a person's model file trained by the studio against the same
file in a plain loop of its framework (bench/references/file_loop.py),
alternating.

The model is one small CNN written three ways (bench/your_model/: a PyTorch
module, a Keras model, a Flax module), 3×32×32 images, 10 classes. For each
framework it runs the studio (`trainbench run --model FILE:build`: runner,
worker process, the file loaded, hashed and checked, store) and the plain
loop at the same batch, steps, precision (fp32), thread count and random
data, alternating A B / B A on successive repeats. The libtorch worker (tch)
trains the PyTorch file's TorchScript capture and is held against the plain
PyTorch loop. Each side's figure is its median window's samples/s after
warm-up; per framework the geometric mean of the paired studio ÷ plain
ratios and its Student-t 95 % interval. The target is >= 0.95.

    python bench/your_model.py [--frameworks pytorch,tch,tensorflow,jax] [--repeats 3]
                               [--batch 32] [--steps 100] [--window 10] [--threads 1]
                               [--cpus 0] [--json FILE]

Needs target/release/trainbench (`make build-cli`; `--cli` names another)
and the studio's environments.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from fairness import CLI, REFS, pinned, pythons, ratio_interval

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = {
    "pytorch": ("torch_net.py", "pytorch"),
    "tch": ("torch_net.py", "pytorch"),
    "tensorflow": ("keras_net.py", "tensorflow"),
    "jax": ("flax_net.py", "jax"),
}
WARMUP = 5


def studio(cli, fw, a, db, env):
    path = os.path.join(HERE, "your_model", FILES[fw][0])
    cmd = [
        cli, "--db", db, "run", "--framework", fw, "--model", f"{path}:build",
        "--input-shape", "3x32x32", "--num-classes", "10", "--batch-size", str(a.batch),
        "--steps", str(WARMUP + a.steps), "--window-steps", str(a.window), "--threads", str(a.threads), "--json",
    ]  # fmt: skip
    out = subprocess.run(pinned(cmd, a.cpus), capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    run = json.loads(out.stdout)["runs"][0]
    return run["throughput_samples_per_s"], run["param_count"]


def plain(fw, a, python, env):
    path = os.path.join(HERE, "your_model", FILES[fw][0])
    cmd = [
        python, os.path.join(REFS, "file_loop.py"), FILES[fw][1], path, "--batch", str(a.batch),
        "--warmup", str(WARMUP), "--steps", str(a.steps), "--window", str(a.window), "--threads", str(a.threads),
    ]  # fmt: skip
    out = subprocess.run(pinned(cmd, a.cpus), capture_output=True, text=True, env=env, cwd=REFS)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    return row["samples_per_s"], row["params"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frameworks", default="pytorch,tch,tensorflow,jax")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=100, help="timed steps after the warm-up")
    ap.add_argument("--window", type=int, default=10, help="steps per timed window")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cpus", default="0", help="taskset CPU list for both sides ('' = unpinned)")
    ap.add_argument("--cli", default=CLI)
    ap.add_argument("--json", help="also write every pair's figures to this file")
    a = ap.parse_args()
    frameworks = a.frameworks.split(",")
    for fw in frameworks:
        if fw not in FILES:
            sys.exit(f"--frameworks: {fw!r} is not one of {', '.join(FILES)}")
    py = pythons()
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), TF_CPP_MIN_LOG_LEVEL="2")
    pairs = {fw: [] for fw in frameworks}
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "bench.sqlite")
        for r in range(a.repeats):
            for fw in frameworks[r % len(frameworks) :] + frameworks[: r % len(frameworks)]:
                sides = [
                    ("studio", lambda fw=fw: studio(a.cli, fw, a, db, env)),
                    ("plain", lambda fw=fw: plain(fw, a, py[FILES[fw][1]], env)),
                ]
                got = {side: go() for side, go in (sides if r % 2 == 0 else sides[::-1])}
                (s, sp), (p, pp) = got["studio"], got["plain"]
                if sp != pp:
                    sys.exit(f"{fw}: the studio counted {sp} parameters, the plain loop {pp}")
                pairs[fw].append({"studio": s, "plain": p, "ratio": s / p, "params": sp})
                print(f"repeat {r + 1} {fw:<11} studio {s:8.2f}  plain {p:8.2f}  ratio {s / p:.3f}", flush=True)
    print(
        f"\nfp32, batch {a.batch}, {a.threads} thread(s), random 3×32×32 images, {a.repeats} alternating repeats, "
        f"CPUs {a.cpus or 'unpinned'}; samples/s = median window after {WARMUP} warm-up steps; ratio = "
        "geometric mean of the paired studio ÷ plain-loop ratios, Student-t 95 % interval"
    )
    print(
        "| framework | model file | parameters | studio samples/s (median) | plain loop (median) | ratio | 95 % interval |"
    )
    print("|---|---|---:|---:|---:|---:|---|")
    for fw, rows in pairs.items():
        g, ci = ratio_interval([x["ratio"] for x in rows])
        ci_text = f"{ci[0]:.2f}–{ci[1]:.2f}" if ci else "one repeat"
        print(
            f"| {fw} | {FILES[fw][0]} | {rows[0]['params']:,} | {statistics.median(x['studio'] for x in rows):.1f} | "
            f"{statistics.median(x['plain'] for x in rows):.1f} | {g:.3f} | {ci_text} |"
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(pairs, f, indent=1)


if __name__ == "__main__":
    main()
