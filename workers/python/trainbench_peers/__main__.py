"""One peer measurement: a plain eager training loop of a timm image model or
a Hugging Face GPT-2, or a plain Flax ViT under ``jax.jit`` (``flax_vit.py``), as their users write it, timed like the studio times a
run (warm-up steps untimed, then windows of steps each ended by waiting for
the device, the median window's samples/s). Prints one JSON line.

    python -m trainbench_peers --library timm --model vit_base_patch16_224 \\
        --batch 64 --precision amp-bf16 --device cuda --steps 30

Practice on a GPU, the same as the studio's PyTorch worker: AdamW with the
studio's settings (lr 1e-3, betas 0.9/0.999, eps 1e-8, weight decay 0.05),
``fused=True`` on CUDA; ``torch.autocast`` for amp-bf16 / amp-fp16 (fp16 with
``GradScaler``); TF32 only for tf32; channels-last and cuDNN benchmark mode
for convolutional networks on CUDA; the attention each library picks by
default (timm's fused ``F.scaled_dot_product_attention``, Hugging Face's
``sdpa``); GPT-2's activation as ``GPT2Config`` sets it (``gelu_new``) unless
``--activation`` names another. Each choice is listed in the output's
``practice``.
"""

import argparse
import json
import statistics
import sys
import time

# The studio's small models, as the peer libraries build them.
TIMM_SHAPES = {
    # width 96, depth 4, 3 heads, MLP 384, patch 4, 32 px (459,562 parameters at 10 classes)
    "vit_mini_patch4_32": dict(patch_size=4, embed_dim=96, depth=4, num_heads=3, mlp_ratio=4.0),
}
GPT2_SHAPES = {
    "gpt2_small": dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12),
    "gpt2_tiny": dict(vocab_size=256, n_positions=128, n_embd=128, n_layer=2, n_head=2),
}
ADAMW = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.05)
# GPT2Config's activation functions, in words for the practice line.
ACTIVATIONS = {
    "gelu_new": "Hugging Face's NewGELUActivation, the tanh GELU written as seven tensor operations",
    "gelu_pytorch_tanh": 'F.gelu(approximate="tanh"), one operation',
}


def arguments(argv):
    ap = argparse.ArgumentParser(prog="python -m trainbench_peers", description=__doc__.split("\n\n")[0])
    ap.add_argument("--library", choices=["timm", "transformers", "flax"], required=True)
    ap.add_argument("--model", required=True, help="the studio's model name")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--precision", choices=["fp32", "tf32", "amp-bf16", "amp-fp16"], default="fp32")
    ap.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    ap.add_argument("--image-size", type=int, default=None, help="image models: pixels (default: the model's)")
    ap.add_argument("--num-classes", type=int, default=1000)
    ap.add_argument("--seq-len", type=int, default=None, help="GPT-2: tokens per sequence (default: its positions)")
    ap.add_argument("--steps", type=int, default=30, help="timed steps after the warm-up")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--window", type=int, default=5, help="steps per timed window")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument(
        "--activation",
        choices=sorted(ACTIVATIONS),
        default=None,
        help="Hugging Face GPT-2: its MLP's activation (default: GPT2Config's, gelu_new)",
    )
    a = ap.parse_args(argv)
    if a.activation is not None and a.library != "transformers":
        ap.error(
            f"activation = {a.activation} is not allowed: only the Hugging Face peer (library transformers) has one"
        )
    for field in ("batch", "steps", "window"):
        if getattr(a, field) < 1:
            ap.error(f"{field} = {getattr(a, field)} is not allowed: expected a whole number ≥ 1")
    if a.steps < a.window:
        ap.error(f"steps = {a.steps} is not allowed: expected at least one window of {a.window}")
    return a


def timm_model(a, torch):
    import timm

    kwargs = dict(num_classes=a.num_classes)
    if a.model in TIMM_SHAPES:
        from timm.models.vision_transformer import VisionTransformer

        size = a.image_size or 32
        return VisionTransformer(img_size=size, **TIMM_SHAPES[a.model], **kwargs), size, timm.__version__
    if a.model not in timm.list_models(a.model):
        raise SystemExit(f"model = {a.model} is not allowed: timm has no model of that name")
    size = a.image_size or 224
    if a.model.startswith("vit_"):
        kwargs["img_size"] = size
    return timm.create_model(a.model, **kwargs), size, timm.__version__


def gpt2_model(a):
    import transformers

    if a.model not in GPT2_SHAPES:
        raise SystemExit(f"model = {a.model} is not allowed: expected one of {', '.join(GPT2_SHAPES)}")
    shape = GPT2_SHAPES[a.model]
    v = shape["vocab_size"]
    config = transformers.GPT2Config(**shape, bos_token_id=v - 1, eos_token_id=v - 1)
    if a.activation is not None:
        config.activation_function = a.activation
    config._attn_implementation = "sdpa"
    return transformers.GPT2LMHeadModel(config), transformers.__version__


def measure(step, wait, a):
    """``a.warmup`` steps untimed, then windows of ``a.window`` steps, each
    ended by ``wait`` (the device synchronised); the median window's rate."""
    started = time.perf_counter()
    loss = None
    for _ in range(a.warmup):
        loss = step()
    wait(loss)
    warm_s = time.perf_counter() - started
    windows, t0, last = [], time.perf_counter(), None
    for i in range(a.steps):
        loss = step()
        if (i + 1) % a.window == 0:
            last = wait(loss)
            t1 = time.perf_counter()
            windows.append(a.window * a.batch / (t1 - t0))
            t0 = t1
    rate = statistics.median(windows)
    return {
        "samples_per_s": rate,
        "windows": [round(w, 4) for w in windows],
        "step_ms": 1000.0 * a.batch / rate,
        "warmup_s": round(warm_s, 3),
        "final_loss": last,
    }


def flax_main(a):
    from .flax_vit import run

    out = {"library": "flax", "model": a.model, "batch": a.batch, "precision": a.precision, "device": a.device}
    out.update(run(a, lambda step, wait: measure(step, wait, a)))
    print(json.dumps(out))


def main(argv=None):
    a = arguments(sys.argv[1:] if argv is None else argv)
    if a.library == "flax":
        return flax_main(a)
    import torch
    import torch.nn.functional as F

    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    device = torch.device(a.device)
    cuda = device.type == "cuda"
    practice = []
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = a.precision == "tf32"
        torch.backends.cudnn.allow_tf32 = a.precision == "tf32"
        practice.append(f"TF32 matmuls and convolutions {'on' if a.precision == 'tf32' else 'off'}")
    text = a.library == "transformers"
    if text:
        model, version = gpt2_model(a)
        seq = a.seq_len or model.config.n_positions
        x = torch.randint(0, model.config.vocab_size, (a.batch, seq + 1), device=device)
        practice.append("Hugging Face GPT2LMHeadModel, attention sdpa (F.scaled_dot_product_attention)")
        act = model.config.activation_function
        practice.append(f"activation {act}: {ACTIVATIONS.get(act, 'as transformers defines it')}")
    else:
        model, size, version = timm_model(a, torch)
        x = torch.randn(a.batch, 3, size, size, device=device)
        y = torch.randint(0, a.num_classes, (a.batch,), device=device)
        practice.append(f"timm {a.model} at {size} px")
    conv = not text and not a.model.startswith("vit_")
    model = model.to(device).train()
    if cuda and conv:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
        torch.backends.cudnn.benchmark = True
        practice.append("channels-last; cuDNN benchmark mode")
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), **ADAMW, fused=cuda or None)
    practice.append("AdamW fused" if cuda else "AdamW (PyTorch's default implementation)")
    dtype = {"amp-bf16": torch.bfloat16, "amp-fp16": torch.float16}.get(a.precision)
    scaler = torch.amp.GradScaler("cuda") if a.precision == "amp-fp16" else None
    if dtype is not None:
        practice.append(
            f"torch.autocast({device.type}, {str(dtype).split('.')[1]})" + (" with GradScaler" if scaler else "")
        )

    def loss_of():
        if text:
            logits = model(input_ids=x[:, :-1]).logits
            return F.cross_entropy(logits.float().flatten(0, 1), x[:, 1:].flatten())
        return F.cross_entropy(model(x).float(), y)

    def step():
        opt.zero_grad(set_to_none=True)
        if dtype is not None:
            with torch.autocast(device.type, dtype=dtype):
                loss = loss_of()
        else:
            loss = loss_of()
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        return loss

    def wait(loss):
        if cuda:
            torch.cuda.synchronize(device)
        return float(loss.detach())

    timed = measure(step, wait, a)
    out = {
        "library": a.library,
        "library_version": version,
        "torch": torch.__version__,
        "model": a.model,
        "params": params,
        "batch": a.batch,
        "precision": a.precision,
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if cuda else "cpu",
        **timed,
        "practice": practice,
    }
    if text:
        out["seq_len"] = seq
        out["activation"] = model.config.activation_function
        out["tokens_per_s"] = timed["samples_per_s"] * seq
    else:
        out["image_size"] = size
    if cuda:
        out["peak_allocated_bytes"] = torch.cuda.max_memory_allocated(device)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
