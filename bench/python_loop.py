"""A plain PyTorch training loop: the baseline the libtorch worker is measured against.

Same models as the worker's catalogue (the parameter count is checked against
`trainbench-worker-tch describe`), same synthetic data pool, AdamW, learning-rate
schedule, thread count and timing windows. It prints the worker protocol's
`first_step` and `window` events, so both runs are summarised by the same code.

    python bench/python_loop.py --model resnet_mini --batch-size 64 --steps 200 --threads 1
"""
import argparse
import json
import math
import os
import sys
import time

_T0 = time.monotonic_ns()

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def since_process_start_s():
    """Seconds since the kernel started this process (as the Rust worker reports)."""
    with open("/proc/self/stat") as f:
        stat = f.read()
    after = stat[stat.rfind(")") + 2:].split()
    start_ticks = int(after[19])
    ticks = os.sysconf("SC_CLK_TCK")
    return time.clock_gettime(time.CLOCK_BOOTTIME) - start_ticks / ticks


class BasicBlock(nn.Module):
    def __init__(self, inp, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inp, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inp != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inp, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(y + identity)


class ResNetMini(nn.Module):
    """The catalogue's resnet_mini: 3×3 stem, basic blocks 16/32/64, one per stage."""

    def __init__(self, in_channels=3, classes=10, planes=(16, 32, 64)):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, planes[0], 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes[0])
        blocks, inp = [], planes[0]
        for i, p in enumerate(planes):
            blocks.append(BasicBlock(inp, p, 1 if i == 0 else 2))
            inp = p
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(inp, classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.blocks(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class Block(nn.Module):
    def __init__(self, d, heads, mlp):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d, eps=1e-6)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d, eps=1e-6)
        self.fc1 = nn.Linear(d, mlp)
        self.fc2 = nn.Linear(mlp, d)

    def forward(self, x):
        b, t, d = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class ViTMini(nn.Module):
    """The catalogue's vit_mini_patch4_32: timm-style ViT, patch 4, width 96, depth 4."""

    def __init__(self, image=32, patch=4, d=96, depth=4, heads=3, mlp=384, in_channels=3, classes=10):
        super().__init__()
        self.patch = nn.Conv2d(in_channels, d, patch, patch)
        tokens = (image // patch) ** 2 + 1
        self.cls_token = nn.Parameter(torch.randn(1, 1, d) * 1e-6)
        self.pos_embed = nn.Parameter(torch.randn(1, tokens, d) * 0.02)
        self.blocks = nn.Sequential(*[Block(d, heads, mlp) for _ in range(depth)])
        self.norm = nn.LayerNorm(d, eps=1e-6)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], 1) + self.pos_embed
        x = self.blocks(x)
        return self.head(self.norm(x)[:, 0])


MODELS = {"resnet_mini": ResNetMini, "vit_mini_patch4_32": ViTMini}


def learning_rate(peak, step, warmup, total):
    """The studio's schedule (trainbench_core::spec::learning_rate)."""
    if warmup > 0 and step <= warmup:
        return peak * step / warmup
    progress = min((step - warmup) / max(total - warmup, 1), 1.0)
    return 0.5 * peak * (1.0 + math.cos(math.pi * progress))


def emit(event):
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=sorted(MODELS), required=True)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--window-steps", type=int, default=10)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--param-count", action="store_true", help="print the parameter count and exit")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(args.seed)
    model = MODELS[args.model]()
    params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    if args.param_count:
        print(params)
        return
    b = args.batch_size
    pool = 8 * b  # the worker's synthetic pool: min(synthetic_samples=1024, 8 × batch)
    pool = max(min(1024, pool), b)
    xs = torch.randn(pool, 3, 32, 32)
    ys = torch.randint(0, 10, (pool,))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.05)
    total = args.steps
    warmup = max(total // 20, 1)
    batches_in_pool = pool // b
    model.train()
    train_start = time.monotonic_ns()
    window_start, window_steps, window_first, window_loss, index = 0, 0, 2, 0.0, 0
    for step in range(1, total + 1):
        lr = learning_rate(args.lr, step, warmup, total)
        for g in opt.param_groups:
            g["lr"] = lr
        start = ((step - 1) % batches_in_pool) * b
        x, y = xs[start:start + b], ys[start:start + b]
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step == 1:
            now = time.monotonic_ns()
            emit({"event": "first_step", "since_process_start_s": since_process_start_s(),
                  "since_train_start_s": (now - train_start) / 1e9, "t_ns": now})
            window_start = time.monotonic_ns()
            continue
        window_loss = window_loss + loss.detach()
        window_steps += 1
        if window_steps == args.window_steps or step == total:
            end = time.monotonic_ns()  # CPU: every op has finished when it returns
            emit({"event": "window", "index": index, "first_step": window_first, "steps": window_steps,
                  "samples": window_steps * b, "start_ns": window_start, "end_ns": end,
                  "loss_mean": float(window_loss) / window_steps, "lr": lr})
            index += 1
            window_first = step + 1
            window_steps, window_loss = 0, 0.0
            window_start = time.monotonic_ns()
    emit({"event": "done", "steps": total, "samples": total * b, "reason": "completed", "t_ns": time.monotonic_ns()})


if __name__ == "__main__":
    main()
