"""Benchmark: the libtorch worker (Rust, tch) against a plain PyTorch loop.

For each model, alternates the two in ABBA order (tch, python, python, tch, …)
`--repeats` times with the same batch, precision (fp32), thread count, synthetic data and
step count, and reports each run's steady-state throughput (median of the
steady windows, warm-up excluded by the studio's rule) and the ratio of the
medians across repeats. Run through `make bench`.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = os.path.join(ROOT, "target", "release", "trainbench-worker-tch")
LOOP = os.path.join(ROOT, "bench", "python_loop.py")


def summarize(events_text, worker=WORKER):
    out = subprocess.run([worker, "summarize"], input=events_text, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def run_tch(model, batch, steps, threads, window, worker=WORKER):
    """One training run of the libtorch worker (`worker`: which build), summarised."""
    spec = {
        "model": model,
        "batch_size": batch,
        "steps": steps,
        "threads": threads,
        "window_steps": window,
        "synthetic_samples": 1024,
    }
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([worker, "train"], input=json.dumps(spec), capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"{worker} failed: {out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    return summarize(out.stdout, worker)


def run_python(model, batch, steps, threads, window):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    cmd = [
        sys.executable,
        LOOP,
        "--model",
        model,
        "--batch-size",
        str(batch),
        "--steps",
        str(steps),
        "--threads",
        str(threads),
        "--window-steps",
        str(window),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"python loop failed: {out.stderr[-2000:]}")
    return summarize(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="resnet_mini,vit_mini_patch4_32")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--window-steps", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()

    results = {}
    for model in args.models.split(","):
        # Same architecture on both sides, or the comparison means nothing.
        described = json.loads(
            subprocess.run(
                [WORKER, "describe", "--model", model, "--json"], capture_output=True, text=True, check=True
            ).stdout
        )
        py_params = int(
            subprocess.run(
                [sys.executable, LOOP, "--model", model, "--param-count"], capture_output=True, text=True, check=True
            ).stdout
        )
        if py_params != described["param_count"]:
            sys.exit(f"{model}: python has {py_params} parameters, the worker {described['param_count']}")
        runs = {"tch": [], "python": []}
        for r in range(args.repeats):
            # ABBA order, so a drift of the machine favours neither side.
            order = (("tch", run_tch), ("python", run_python))
            for name, fn in order if r % 2 == 0 else order[::-1]:
                s = fn(model, args.batch_size, args.steps, args.threads, args.window_steps)
                st = s["steady"]
                runs[name].append(
                    {
                        "median": st["median_samples_per_s"],
                        "ci95": st["ci95"],
                        "warmup": st["windows_warmup"],
                        "windows": st["windows_total"],
                        "first_step_s": s["first_step_s"],
                    }
                )
                ci = st["ci95"]
                ci_text = f"[{ci['low']:.0f}, {ci['high']:.0f}]" if ci else "n/a"
                print(
                    f"{model:<20} repeat {r + 1} {name:<6} {st['median_samples_per_s']:8.1f} samples/s "
                    f"(95% CI {ci_text}, {st['windows_total'] - st['windows_warmup']} steady windows) "
                    f"first step {s['first_step_s']:.2f} s",
                    flush=True,
                )
        tch = statistics.median(x["median"] for x in runs["tch"])
        py = statistics.median(x["median"] for x in runs["python"])
        results[model] = {
            "params": py_params,
            "tch": runs["tch"],
            "python": runs["python"],
            "tch_median": tch,
            "python_median": py,
            "ratio": tch / py,
        }
        print(f"{model:<20} tch {tch:.1f} vs python {py:.1f} samples/s -> ratio {tch / py:.3f}", flush=True)

    print()
    print("| model | params | tch samples/s | PyTorch loop samples/s | tch ÷ PyTorch |")
    print("|---|---:|---:|---:|---:|")
    for model, r in results.items():
        print(f"| {model} | {r['params']:,} | {r['tch_median']:.1f} | {r['python_median']:.1f} | {r['ratio']:.3f} |")
    print(
        f"\nbatch {args.batch_size}, fp32, {args.threads} thread(s), {args.steps} steps, windows of "
        f"{args.window_steps}, {args.repeats} interleaved repeats; medians across repeats"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"config": vars(args), "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
