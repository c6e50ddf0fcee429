"""ViT-Tiny/16 as a PyTorch user writes it (timm's ``vit_tiny_patch16_224``
layer for layer: ``nn.Linear`` qkv, ``F.scaled_dot_product_attention``,
``nn.LayerNorm`` eps 1e-6, exact GELU, class token, learned positions), a
plain eager loop with ``torch.optim.AdamW``: 5,526,346 parameters at 10
classes, as the studio's.

    python bench/references/torch_vit.py [--batch 8] [--steps 20] [--threads 1]
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from timing import arguments, measure, report


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        return self.proj(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, c))


class Block(nn.Module):
    def __init__(self, dim, heads, mlp):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp), nn.GELU(), nn.Linear(mlp, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    def __init__(self, classes, dim=192, depth=12, heads=3, mlp=768, patch=16, size=224):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, (size // patch) ** 2 + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[Block(dim, heads, mlp) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], 1) + self.pos_embed
        return self.head(self.norm(self.blocks(x))[:, 0])


def main():
    a = arguments(batch=8).parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = ViT(a.classes).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.05)
    x = torch.randn(a.batch, 3, 224, 224)
    y = torch.randint(0, a.classes, (a.batch,))

    def step():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    result = measure(step, lambda loss: loss.item(), a)
    report(
        "pytorch",
        "vit_tiny_patch16_224",
        sum(p.numel() for p in model.parameters()),
        a,
        result,
        version=torch.__version__,
    )


if __name__ == "__main__":
    main()
