"""Benchmark: the same small models in every framework, on this machine's CPU.

Configurations: tch (libtorch from Rust), PyTorch eager, PyTorch compiled
(torch.compile), TensorFlow (tf.function graph), TensorFlow + XLA, JAX (jit),
each for the small ViT and the small CNN, same batch, fp32, one thread,
synthetic data. Every run goes through `trainbench run` (the real runner and
store) in a fresh process; the configurations are interleaved, in a rotated
order each repeat (A B C …, B C … A, …), so a drift of the machine spreads over
all of them.

Per configuration it prints the median over repeats of each run's steady
throughput (the run's median window after the studio's warm-up rule), the
Student-t 95 % CI of the mean of those run medians, and the median time to first
step (process start → end of step 1, imports and compilation included) with
the compile time where the framework measures it apart.

    python bench/frameworks.py --repeats 3
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "trainbench")

# Student-t two-sided 97.5 % quantiles by degrees of freedom.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}

CONFIGS = [
    ("tch", "off"),
    ("pytorch", "off"),
    ("pytorch", "on"),
    ("tensorflow", "off"),
    ("tensorflow", "xla"),
    ("jax", "off"),
]
LABEL = {
    ("tch", "off"): "tch (libtorch, Rust)",
    ("pytorch", "off"): "PyTorch eager",
    ("pytorch", "on"): "PyTorch torch.compile",
    ("tensorflow", "off"): "TensorFlow (graph)",
    ("tensorflow", "xla"): "TensorFlow + XLA",
    ("jax", "off"): "JAX (jit)",
}


def mean_ci(xs):
    m = statistics.mean(xs)
    if len(xs) < 2:
        return m, None
    half = T975.get(len(xs) - 1, 1.96) * statistics.stdev(xs) / len(xs) ** 0.5
    return m, (m - half, m + half)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="vit_mini_patch4_32,resnet_mini")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", help="also write every run's figures to this file")
    args = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), TF_CPP_MIN_LOG_LEVEL="2")
    work = [(m, fw, c) for m in args.models.split(",") for fw, c in CONFIGS]
    results = {k: [] for k in work}
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "bench.sqlite")
        for r in range(args.repeats):
            order = work[r % len(work) :] + work[: r % len(work)]
            for model, fw, comp in order:
                cmd = [
                    BIN,
                    "--db",
                    db,
                    "run",
                    "--framework",
                    fw,
                    "--compile",
                    comp,
                    "--model",
                    model,
                    "--batch-size",
                    str(args.batch_size),
                    "--steps",
                    str(args.steps),
                    "--threads",
                    str(args.threads),
                    "--json",
                ]
                out = subprocess.run(cmd, capture_output=True, text=True, env=env)
                if out.returncode != 0:
                    sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
                run = json.loads(out.stdout)["runs"][0]
                detail = json.loads(
                    subprocess.run(
                        [BIN, "--db", db, "show", str(run["id"]), "--json"], capture_output=True, text=True, check=True
                    ).stdout
                )
                row = {
                    "throughput": run["throughput_samples_per_s"],
                    "ci": run["throughput_ci95"],
                    "first_step_s": run["time_to_first_step_s"],
                    "compile_s": detail.get("compile_s"),
                    "version": (detail.get("hello") or {}).get("framework_version"),
                    "execution": (detail.get("hello") or {}).get("execution"),
                }
                results[(model, fw, comp)].append(row)
                print(
                    f"repeat {r + 1} {model:<20} {LABEL[(fw, comp)]:<24} {row['throughput']:8.1f} samples/s  "
                    f"first step {row['first_step_s']:.2f} s",
                    flush=True,
                )
    print(
        f"\nbatch {args.batch_size}, fp32, {args.threads} thread(s), synthetic data, {args.steps} steps, "
        f"{args.repeats} interleaved repeats; throughput = median over repeats of each run's steady median; "
        f"CI = Student-t 95 % of the mean of run medians"
    )
    print("| model | framework | version | samples/s (median) | 95 % CI | first step, s (median) |")
    print("|---|---|---|---:|---|---:|")
    for (model, fw, comp), rows in results.items():
        tps = [x["throughput"] for x in rows if x["throughput"]]
        _, ci = mean_ci(tps)
        fs = statistics.median(x["first_step_s"] for x in rows)
        ci_text = f"{ci[0]:.1f}–{ci[1]:.1f}" if ci else "not measured"
        print(
            f"| {model} | {LABEL[(fw, comp)]} | {rows[0]['version']} | {statistics.median(tps):.1f} | "
            f"{ci_text} | {fs:.2f} |"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({f"{m}|{fw}|{c}": v for (m, fw, c), v in results.items()}, f, indent=1)


if __name__ == "__main__":
    main()
