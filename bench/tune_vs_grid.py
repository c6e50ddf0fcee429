"""Benchmark: `trainbench tune` against the exhaustive grid of the same space.

For each space (24 candidates, or 12 with `--small`: a vision model, a
decoder, a person's model file) it runs the search (`trainbench tune … --json`), then
every candidate of the same space as one sweep (`trainbench run` with the
same comma lists), each candidate as long and as often as the search ran
its last two in the confirmation (its length factor × the probe's steps,
`--repeats` runs, interleaved). The grid's best is the candidate with the
highest mean throughput over its runs, with its Student-t 95 % interval.

Two questions per space:
- Is the search's winner as good as the grid's best? Yes when the grid's
  own mean for the winner's configuration lies within the 95 % interval of
  the grid's best (the same candidate, or one the grid cannot tell apart).
- How long did it take? The search's wall time ÷ the grid's, target ≤ 0.40.

    python bench/tune_vs_grid.py [--spaces vision,decoder,file] [--steps 20] [--window 2]
                                 [--repeats 3] [--small] [--cli target/release/trainbench] [--json FILE]

Needs the CLI built (`make build-cli`; `--cli` names another) and, for the
model-file space, the studio's PyTorch environment. One thread per worker
(`OMP_NUM_THREADS=1`) unless a candidate sets its own.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))
FILE_MODEL = os.path.join(HERE, "your_model", "torch_net.py") + ":build"

# space -> the axes and shared flags: 2 frameworks (the libtorch worker and
# PyTorch from Python) × 6 batches × 2 thread counts = 24 candidates each.
# fp32 only: amp-bf16 is emulated on a CPU without bf16 units at about a
# tenth of fp32's speed, so its grid at the confirmation's length would take
# most of an hour. `--small` takes the 12-candidate spaces measured first
# (the libtorch worker alone; the file in both frameworks at 3 batches).
SPACES = {
    "vision": ["--model", "resnet_mini", "--framework", "tch,pytorch", "--compile", "off", "--precision", "fp32",
               "--batch-size", "2,4,8,16,32,64", "--threads", "1,2"],
    "decoder": ["--model", "gpt2_tiny", "--framework", "tch,pytorch", "--compile", "off", "--precision", "fp32",
                "--batch-size", "1,2,4,8,16,32", "--threads", "1,2"],
    "file": ["--model", FILE_MODEL, "--input-shape", "3x32x32", "--num-classes", "10",
             "--framework", "pytorch,tch", "--compile", "off", "--precision", "fp32", "--batch-size", "4,8,16,32,64,128",
             "--threads", "1,2"],
}  # fmt: skip
SMALL = {
    "vision": ["--model", "resnet_mini", "--framework", "tch", "--precision", "fp32",
               "--batch-size", "2,4,8,16,32,64", "--threads", "1,2"],
    "decoder": ["--model", "gpt2_tiny", "--framework", "tch", "--precision", "fp32",
                "--batch-size", "1,2,4,8,16,32", "--threads", "1,2"],
    "file": ["--model", FILE_MODEL, "--input-shape", "3x32x32", "--num-classes", "10",
             "--framework", "pytorch,tch", "--compile", "off", "--precision", "fp32", "--batch-size", "8,16,32",
             "--threads", "1,2"],
}  # fmt: skip


def timed(cmd):
    """Runs `cmd`, returns (its JSON document, wall seconds)."""
    start = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    if out.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout), wall


def confirm_factor(tuned):
    """The length factor of the confirmation's runs (the longest the search ran)."""
    factors = [r["length_factor"] for c in tuned["candidates"] for r in c.get("rounds") or []]
    return max(factors, default=1)


def grid_best(grid):
    """The grid's configurations by label: (mean, ci95 or None); and its best label."""
    figures = {}
    for c in grid["configurations"]:
        r = c.get("repeats") or {}
        mean = r.get("throughput_mean_samples_per_s")
        if mean:
            figures[c["configuration"]] = (mean, r.get("throughput_ci95"))
    best = max(figures, key=lambda k: figures[k][0])
    return figures, best


def one_space(name, a, db_dir):
    axes = (SMALL if a.small else SPACES)[name]
    shared = [a.cli, "--db", os.path.join(db_dir, f"{name}.sqlite")]
    tune_cmd = shared + ["tune"] + axes + ["--steps", str(a.steps), "--window-steps", str(a.window),
                                           "--repeats", str(a.repeats), "--budget", "2h", "--json"]  # fmt: skip
    tuned, tune_wall = timed(tune_cmd)
    factor = confirm_factor(tuned)
    grid_cmd = shared + ["run"] + axes + ["--steps", str(a.steps * factor), "--window-steps",
                                          str(a.window * factor), "--repeats", str(a.repeats), "--json"]  # fmt: skip
    grid, grid_wall = timed(grid_cmd)
    figures, best = grid_best(grid)
    winner = (tuned.get("winner") or {}).get("configuration")
    w_mean = figures.get(winner, (None, None))[0]
    b_mean, b_ci = figures[best]
    within = w_mean is not None and (winner == best or (b_ci is not None and w_mean >= b_ci["low"]))
    return {
        "space": name,
        "candidates": len(tuned["candidates"]),
        "search": {"winner": winner, "verdict": tuned["verdict"], "runs": len(tuned["run_ids"]),
                   "wall_s": round(tune_wall, 1)},
        "grid": {"best": best, "best_mean": b_mean, "best_ci95": b_ci, "winner_mean": w_mean,
                 "runs": len(grid["runs"]), "steps": a.steps * factor, "wall_s": round(grid_wall, 1)},
        "winner_within_best_ci": within,
        "time_ratio": round(tune_wall / grid_wall, 3),
    }  # fmt: skip


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--spaces", default="vision,decoder,file")
    p.add_argument("--steps", type=int, default=20, help="the probe's steps (the search's --steps)")
    p.add_argument("--window", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cli", default=os.path.join(ROOT, "target", "release", "trainbench"))
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--small", action="store_true", help="the 12-candidate spaces")
    a = p.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    results = []
    with tempfile.TemporaryDirectory() as db_dir:
        for name in a.spaces.split(","):
            r = one_space(name, a, db_dir)
            results.append(r)
            s, g = r["search"], r["grid"]
            ci = g["best_ci95"]
            ci_text = f"{ci['low']:.1f}–{ci['high']:.1f}" if ci else "none"
            w_text = f"{g['winner_mean']:.1f}" if g["winner_mean"] is not None else "not measured"
            print(
                f"{name}: {r['candidates']} candidates; search {s['runs']} runs in {s['wall_s']} s, "
                f"grid {g['runs']} runs of {g['steps']} steps in {g['wall_s']} s (ratio {r['time_ratio']}); "
                f"search's winner {s['winner']} at {w_text} samples/s in the grid, grid's best "
                f"{g['best']} at {g['best_mean']:.1f} (95 % CI {ci_text}): "
                f"{'within' if r['winner_within_best_ci'] else 'NOT within'}",
                flush=True,
            )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
