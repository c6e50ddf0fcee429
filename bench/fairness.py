"""Benchmark: each studio worker against the same model written plainly by
that framework's users (bench/references/), alternating.

For every family (a ViT, a ResNet, a decoder) and framework (PyTorch, tch,
JAX, TensorFlow) it runs the studio (`trainbench run`: runner, worker process,
store) and the framework's plain reference loop at the same model, batch,
steps, precision (fp32), thread count and synthetic data, alternating A B / B A
on successive repeats and rotating the order of the pairs, so a drift of the
machine falls on both sides. The tch worker, PyTorch through libtorch from
Rust, is held against the plain PyTorch loop: the same library underneath.

Each side's figure is its median window's samples/s after warm-up (the
studio's steady throughput; the reference times windows of the same length
after the same number of warm-up steps). Per pair it prints the ratio studio ÷
reference; per family and framework the medians, the geometric mean of the
paired ratios and its Student-t 95 % interval. The target is >= 0.95.

    python bench/fairness.py [--families vit,resnet,decoder] [--frameworks pytorch,tch,jax,tensorflow]
                             [--repeats 3] [--threads 1] [--cpus 0] [--json FILE]

Needs target/release/trainbench (`make build-cli`) and the studio's
environments (`trainbench env list`). Both sides run under `taskset -c CPUS`
(`--cpus ''` to leave them unpinned).
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from frameworks import T975  # the Student-t quantiles frameworks.py uses (this folder is on sys.path)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, "target", "release", "trainbench")
REFS = os.path.join(ROOT, "bench", "references")

# family -> (studio model, extra studio flags, batch, warm-up steps, timed steps, window)
FAMILIES = {
    "vit": ("vit_tiny_patch16_224", ["--num-classes", "10"], 8, 4, 20, 4),
    "resnet": ("resnet18", ["--num-classes", "10"], 8, 4, 20, 4),
    "decoder": ("gpt2_tiny", [], 8, 4, 20, 4),
}
# framework -> (reference prefix, environment's framework)
FRAMEWORKS = {
    "pytorch": ("torch", "pytorch"),
    "tch": ("torch", "pytorch"),
    "jax": ("jax", "jax"),
    "tensorflow": ("tf", "tensorflow"),
}


def pythons():
    out = subprocess.run([CLI, "env", "list", "--json"], capture_output=True, text=True, check=True).stdout
    return {e["framework"]: e["python"] for e in json.loads(out)["environments"] if e["builtin"] and e["ready"]}


def pinned(cmd, cpus):
    return (["taskset", "-c", cpus] + cmd) if cpus and shutil.which("taskset") else cmd


def studio(fw, family, a, db, env):
    model, extra, batch, warmup, steps, window = FAMILIES[family]
    cmd = [
        CLI,
        "--db",
        db,
        "run",
        "--framework",
        fw,
        "--model",
        model,
        *extra,
        "--batch-size",
        str(batch),
        "--steps",
        str(warmup + steps),
        "--window-steps",
        str(window),
        "--threads",
        str(a.threads),
        "--json",
    ]
    out = subprocess.run(pinned(cmd, a.cpus), capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    run = json.loads(out.stdout)["runs"][0]
    return run["throughput_samples_per_s"], run["param_count"]


def reference(fw, family, a, python, env):
    _, _, batch, warmup, steps, window = FAMILIES[family]
    script = os.path.join(REFS, f"{FRAMEWORKS[fw][0]}_{family}.py")
    cmd = [
        python,
        script,
        "--batch",
        str(batch),
        "--warmup",
        str(warmup),
        "--steps",
        str(steps),
        "--window",
        str(window),
        "--threads",
        str(a.threads),
    ]
    out = subprocess.run(pinned(cmd, a.cpus), capture_output=True, text=True, env=env, cwd=REFS)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    return row["samples_per_s"], row["params"]


def ratio_interval(ratios):
    """Geometric mean of the paired ratios and its Student-t 95 % interval."""
    logs = [math.log(r) for r in ratios]
    m = statistics.mean(logs)
    if len(logs) < 2:
        return math.exp(m), None
    half = T975.get(len(logs) - 1, 1.96) * statistics.stdev(logs) / len(logs) ** 0.5
    return math.exp(m), (math.exp(m - half), math.exp(m + half))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", default="vit,resnet,decoder")
    ap.add_argument("--frameworks", default="pytorch,tch,jax,tensorflow")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cpus", default="0", help="taskset CPU list for both sides ('' = unpinned)")
    ap.add_argument("--json", help="also write every pair's figures to this file")
    a = ap.parse_args()
    for name, known in (("families", FAMILIES), ("frameworks", FRAMEWORKS)):
        for x in getattr(a, name).split(","):
            if x not in known:
                sys.exit(f"--{name}: {x!r} is not one of {', '.join(known)}")
    py = pythons()
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), TF_CPP_MIN_LOG_LEVEL="2")
    work = [(fam, fw) for fam in a.families.split(",") for fw in a.frameworks.split(",")]
    pairs = {k: [] for k in work}
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "bench.sqlite")
        for r in range(a.repeats):
            for fam, fw in work[r % len(work) :] + work[: r % len(work)]:
                python = py[FRAMEWORKS[fw][1]]
                sides = [
                    ("studio", lambda fw=fw, fam=fam: studio(fw, fam, a, db, env)),
                    ("reference", lambda fw=fw, fam=fam, python=python: reference(fw, fam, a, python, env)),
                ]
                got = {}
                for side, go in sides if r % 2 == 0 else sides[::-1]:
                    got[side] = go()
                (s, sp), (ref, rp) = got["studio"], got["reference"]
                if sp != rp:
                    sys.exit(f"{fam}/{fw}: the studio's model has {sp} parameters, the reference's {rp}")
                pairs[(fam, fw)].append({"studio": s, "reference": ref, "ratio": s / ref, "params": sp})
                print(
                    f"repeat {r + 1} {fam:<8} {fw:<11} studio {s:8.2f}  reference {ref:8.2f}  ratio {s / ref:.3f}",
                    flush=True,
                )
    print(
        f"\nfp32, {a.threads} thread(s), synthetic data, {a.repeats} alternating repeats, "
        f"CPUs {a.cpus or 'unpinned'}; samples/s = median window after warm-up; "
        "ratio = geometric mean of the paired studio ÷ reference ratios, Student-t 95 % interval"
    )
    print("| family | model | framework | studio samples/s (median) | reference (median) | ratio | 95 % interval |")
    print("|---|---|---|---:|---:|---:|---|")
    for (fam, fw), rows in pairs.items():
        g, ci = ratio_interval([x["ratio"] for x in rows])
        ci_text = f"{ci[0]:.2f}–{ci[1]:.2f}" if ci else "one repeat"
        print(
            f"| {fam} | {FAMILIES[fam][0]} | {fw} | {statistics.median(x['studio'] for x in rows):.2f} | "
            f"{statistics.median(x['reference'] for x in rows):.2f} | {g:.3f} | {ci_text} |"
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump({f"{fam}|{fw}": v for (fam, fw), v in pairs.items()}, f, indent=1)


if __name__ == "__main__":
    main()
