"""Benchmark: GPT-2 small tokens/s of the studio's PyTorch worker
against a plain Hugging Face ``GPT2LMHeadModel`` training loop, and the
studio's other workers (TensorFlow, JAX, tch) at the same settings.

Both train GPT-2 small (124,439,808 parameters, dropout 0.1 as Hugging Face
trains it) on random tokens at the same sequence length, batch, thread count,
AdamW settings (betas 0.9/0.999, eps 1e-8, weight decay 0.05) and causal LM
loss over every position (``seq_len`` inputs, their next tokens), fp32 eager.
The studio run goes through ``trainbench run`` (its runner, worker process and
timed windows); the plain loop times windows of the same length with
``time.perf_counter`` in one process. Each side's throughput is the median of
its windows after the first (warm-up); runs alternate ABBA ``--repeats`` times
and the ratio is of the medians over repeats. Needs ``target/release/trainbench``
(``make build-cli``) and the studio's torch environment (transformers is in it).

    python bench/gpt2_vs_hf.py --seq-len 256 --batch-size 2 --steps 12 --window-steps 3 --repeats 2
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, "target", "release", "trainbench")

HF_LOOP = r"""
import json, statistics, sys, time
import torch, torch.nn.functional as F, transformers
a = json.loads(sys.argv[1])
torch.set_num_threads(a["threads"]); torch.set_num_interop_threads(1); torch.manual_seed(0)
model = transformers.GPT2LMHeadModel(transformers.GPT2Config())  # GPT-2 small, dropout 0.1
model.train()
params = sum(p.numel() for p in model.parameters())
opt = torch.optim.AdamW(model.parameters(), lr=a["lr"], betas=(0.9, 0.999), eps=1e-8, weight_decay=0.05)
g = torch.Generator().manual_seed(0)
pool = torch.randint(0, 50257, (8 * a["batch"], a["seq_len"] + 1), generator=g)
windows, t0 = [], time.perf_counter()
for step in range(a["steps"]):
    i = (step * a["batch"]) % pool.shape[0]
    x = pool[i:i + a["batch"]]
    logits = model(input_ids=x[:, :-1]).logits
    loss = F.cross_entropy(logits.float().flatten(0, 1), x[:, 1:].flatten())
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if (step + 1) % a["window"] == 0:
        loss.item()
        t1 = time.perf_counter()
        windows.append(a["window"] * a["batch"] / (t1 - t0))
        t0 = t1
print(json.dumps({"samples_per_s": statistics.median(windows[1:]), "windows": windows, "params": params,
                  "transformers": transformers.__version__, "torch": torch.__version__}))
"""


def torch_python():
    home = os.environ.get("TRAINBENCH_HOME") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "trainbench"
    )
    return os.path.join(home, "envs", "torch-2.13.0", "bin", "python")


def run_studio(a, db, framework="pytorch"):
    cmd = [
        CLI,
        "--db",
        db,
        "run",
        "--framework",
        framework,
        "--model",
        "gpt2_small",
        "--seq-len",
        str(a.seq_len),
        "--batch-size",
        str(a.batch_size),
        "--steps",
        str(a.steps),
        "--window-steps",
        str(a.window_steps),
        "--threads",
        str(a.threads),
        "--lr",
        str(a.lr),
        "--json",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS=str(a.threads)))
    if out.returncode != 0:
        sys.exit(f"studio {framework} run failed: {out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    run = json.loads(out.stdout)["runs"][0]
    return run["throughput_samples_per_s"], run["param_count"]


def run_hf(a):
    args = {
        "threads": a.threads,
        "lr": a.lr,
        "batch": a.batch_size,
        "seq_len": a.seq_len,
        "steps": a.steps,
        "window": a.window_steps,
    }
    out = subprocess.run(
        [torch_python(), "-c", HF_LOOP, json.dumps(args)],
        capture_output=True,
        text=True,
        env=dict(os.environ, OMP_NUM_THREADS=str(a.threads)),
    )
    if out.returncode != 0:
        sys.exit(f"Hugging Face loop failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seq-len", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=2)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--window-steps", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument(
        "--frameworks",
        default="tensorflow,jax,tch",
        help="the studio's other workers to measure at the same settings (comma-separated, or empty)",
    )
    a = p.parse_args()
    studio, hf = [], []
    others = {f: [] for f in a.frameworks.split(",") if f}
    with tempfile.TemporaryDirectory(prefix="trainbench-gpt2-bench-") as d:
        db = os.path.join(d, "bench.sqlite")
        for r in range(a.repeats):
            order = ("studio", "hf") if r % 2 == 0 else ("hf", "studio")
            for side in order:
                if side == "studio":
                    tp, params = run_studio(a, db)
                    studio.append(tp)
                    print(f"repeat {r + 1} studio  {tp * a.seq_len:9.1f} tokens/s ({params} parameters)", flush=True)
                else:
                    h = run_hf(a)
                    hf.append(h["samples_per_s"])
                    print(
                        f"repeat {r + 1} HF loop {h['samples_per_s'] * a.seq_len:9.1f} tokens/s ({h['params']} "
                        f"parameters, transformers {h['transformers']}, torch {h['torch']})",
                        flush=True,
                    )
            for f, got in others.items():
                tp, params = run_studio(a, db, f)
                got.append(tp)
                print(f"repeat {r + 1} studio {f} {tp * a.seq_len:9.1f} tokens/s ({params} parameters)", flush=True)
    s, h = statistics.median(studio), statistics.median(hf)
    print(
        json.dumps(
            {
                "model": "gpt2_small",
                "seq_len": a.seq_len,
                "batch_size": a.batch_size,
                "threads": a.threads,
                "studio_tokens_per_s": s * a.seq_len,
                "hf_tokens_per_s": h * a.seq_len,
                "ratio_studio_to_hf": s / h,
                "studio_runs": [x * a.seq_len for x in studio],
                "hf_runs": [x * a.seq_len for x in hf],
                "other_frameworks_tokens_per_s": {f: statistics.median(v) * a.seq_len for f, v in others.items()},
            }
        )
    )


if __name__ == "__main__":
    main()
