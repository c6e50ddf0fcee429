"""Benchmark: harness overhead of the studio.

Alternates in ABBA order, `--repeats` times, the same configuration run
  (a) through `trainbench run` (runner, 10 Hz telemetry, SQLite writes), and
  (b) bare: the same worker started directly (`trainbench-worker-tch train`,
      or `python -m trainbench_worker FRAMEWORK train` with the plan the studio
      would send, from `trainbench run --print-plan`), no runner, no telemetry,
and compares the steady throughput the studio reports with the bare worker's
(summarised by the same code). Also reports the runner's own CPU use (the
`trainbench` process itself, not its worker) while it samples at 10 Hz.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--framework", default="tch", help="tch, pytorch, tensorflow or jax")
    ap.add_argument("--model", default="resnet_mini")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    studio, bare, cpu = [], [], []
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "bench.sqlite")
        flags = [
            "--framework",
            args.framework,
            "--model",
            args.model,
            "--batch-size",
            str(args.batch_size),
            "--steps",
            str(args.steps),
            "--threads",
            str(args.threads),
        ]
        plan = json.loads(
            subprocess.run(
                [os.path.join(BIN, "trainbench"), "run", *flags, "--print-plan"],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            ).stdout
        )

        def run_studio():
            out = subprocess.run(
                [os.path.join(BIN, "trainbench"), "--db", db, "run", *flags, "--json"],
                capture_output=True,
                text=True,
                env=env,
            )
            if out.returncode != 0:
                sys.exit(f"trainbench run failed: {out.stdout}\n{out.stderr}")
            doc = json.loads(out.stdout)
            cpu.append(100.0 * doc["studio"]["cpu_s"] / doc["studio"]["wall_s"])
            return doc["runs"][0]["throughput_samples_per_s"]

        def run_bare():
            worker_env = dict(env, **{k: v for k, v in plan["env"]})
            w = subprocess.run(
                [plan["program"], *plan["args"]],
                input=plan["stdin"],
                capture_output=True,
                text=True,
                env=worker_env,
                check=True,
            )
            s = subprocess.run(
                [os.path.join(BIN, "trainbench-worker-tch"), "summarize"],
                input=w.stdout,
                capture_output=True,
                text=True,
                check=True,
            )
            return json.loads(s.stdout)["steady"]["median_samples_per_s"]

        for r in range(args.repeats):
            # ABBA order, so a drift of the machine favours neither side.
            if r % 2 == 0:
                tp_studio, tp_bare = run_studio(), run_bare()
            else:
                tp_bare, tp_studio = run_bare(), run_studio()
            studio.append(tp_studio)
            bare.append(tp_bare)
            print(
                f"repeat {r + 1}: studio {tp_studio:.1f} samples/s, bare worker {tp_bare:.1f} samples/s, "
                f"runner CPU {cpu[-1]:.2f} % of one core",
                flush=True,
            )
    ms, mb = statistics.median(studio), statistics.median(bare)
    ratios = [a / b for a, b in zip(studio, bare)]
    print(
        f"\n{args.framework} {args.model}, batch {args.batch_size}, {args.steps} steps, {args.threads} thread(s), "
        f"{args.repeats} alternations (ABBA)"
    )
    print(f"median studio {ms:.1f} samples/s vs bare {mb:.1f} samples/s: difference {100 * (ms - mb) / mb:+.2f} %")
    if len(ratios) >= 2:
        m = statistics.mean(ratios)
        half = 1.96 * statistics.stdev(ratios) / len(ratios) ** 0.5
        print(
            f"paired ratio studio/bare: mean {m:.3f} (≈95 % CI {m - half:.3f}–{m + half:.3f}); "
            f"run-to-run spread of the bare worker: {100 * statistics.pstdev(bare) / mb:.1f} % (sd)"
        )
    print(
        f"runner CPU while sampling at 10 Hz: median {statistics.median(cpu):.2f} % of one core (max {max(cpu):.2f} %)"
    )


if __name__ == "__main__":
    main()
