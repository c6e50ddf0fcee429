"""The PyTorch worker's models: torch.nn modules at their defaults, each the
reference architecture (timm, torchvision, Hugging Face) layer for layer,
and which kernel scaled_dot_product_attention picks.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from .protocol import first_line
from .traits import Attention

# --- models -----------------------------------------------------------------


def _linear(i, o, std=0.02):
    layer = nn.Linear(i, o)
    if layer.weight.device.type != "meta":
        nn.init.normal_(layer.weight, std=std)
        nn.init.zeros_(layer.bias)
    return layer


class VitBlock(nn.Module):
    def __init__(self, d, heads, mlp):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d, eps=1e-6)
        self.qkv = _linear(d, 3 * d)
        self.proj = _linear(d, d)
        self.norm2 = nn.LayerNorm(d, eps=1e-6)
        self.fc1 = _linear(d, mlp)
        self.fc2 = _linear(mlp, d)

    def forward(self, x):
        b, t, d = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        # unbind, as timm: its backward is one stack, where indexing's is a
        # zero-filled copy of the whole projection per part, then two sums.
        q, k, v = qkv.unbind(0)
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class Vit(nn.Module):
    """timm's VisionTransformer at its defaults (class token, learned positions,
    pre-norm blocks, LayerNorm eps 1e-6, exact GELU, head on the class token)."""

    def __init__(self, c):
        super().__init__()
        d = c["embed_dim"]
        self.patch = nn.Conv2d(c["in_channels"], d, c["patch_size"], c["patch_size"])
        tokens = (c["image_size"] // c["patch_size"]) ** 2 + 1
        self.cls_token = nn.Parameter(torch.randn(1, 1, d) * 1e-6)
        self.pos_embed = nn.Parameter(torch.randn(1, tokens, d) * 0.02)
        self.blocks = nn.Sequential(*[VitBlock(d, c["num_heads"], c["mlp_hidden"]) for _ in range(c["depth"])])
        self.norm = nn.LayerNorm(d, eps=1e-6)
        self.head = _linear(d, c["num_classes"])

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], 1) + self.pos_embed
        x = self.blocks(x)
        return self.head(self.norm(x)[:, 0])


def _conv_bn(i, o, k, stride):
    conv = nn.Conv2d(i, o, k, stride, k // 2, bias=False)
    if conv.weight.device.type != "meta":
        nn.init.kaiming_normal_(conv.weight, mode="fan_out", nonlinearity="relu")
    return nn.Sequential(conv, nn.BatchNorm2d(o))


class ResBlock(nn.Module):
    def __init__(self, kind, inp, planes, stride):
        super().__init__()
        if kind == "basic":
            self.convs = nn.ModuleList([_conv_bn(inp, planes, 3, stride), _conv_bn(planes, planes, 3, 1)])
            out = planes
        else:  # torchvision v1.5 bottleneck: the stride on the 3×3
            self.convs = nn.ModuleList(
                [_conv_bn(inp, planes, 1, 1), _conv_bn(planes, planes, 3, stride), _conv_bn(planes, planes * 4, 1, 1)]
            )
            out = planes * 4
        self.downsample = _conv_bn(inp, out, 1, stride) if stride != 1 or inp != out else None

    def forward(self, x):
        y = x
        for i, c in enumerate(self.convs):
            y = c(y)
            if i != len(self.convs) - 1:
                y = F.relu(y)
        return F.relu(y + (x if self.downsample is None else self.downsample(x)))


class ResNet(nn.Module):
    """torchvision's ResNet (v1.5), or its small-image stem for CPU variants."""

    def __init__(self, c):
        super().__init__()
        imagenet = c["stem"] == "imagenet"
        self.stem = _conv_bn(c["in_channels"], c["stem_width"], 7 if imagenet else 3, 2 if imagenet else 1)
        self.pool = imagenet
        blocks, inp = [], c["stem_width"]
        expansion = 1 if c["block"] == "basic" else 4
        for stage, (n, planes) in enumerate(zip(c["layers"], c["planes"])):
            for b in range(n):
                blocks.append(ResBlock(c["block"], inp, planes, (1 if stage == 0 else 2) if b == 0 else 1))
                inp = planes * expansion
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(inp, c["num_classes"])  # nn.Linear's default init, as torchvision

    def forward(self, x):
        x = F.relu(self.stem(x))
        if self.pool:
            x = F.max_pool2d(x, 3, 2, 1)
        x = self.blocks(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["hidden"]
        self.heads = c["heads"]
        self.query, self.key, self.value = _linear(d, d), _linear(d, d), _linear(d, d)
        self.attn_out = _linear(d, d)
        self.attn_norm = nn.LayerNorm(d, eps=1e-12)
        self.intermediate = _linear(d, c["intermediate"])
        self.output = _linear(c["intermediate"], d)
        self.out_norm = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x):
        b, t, d = x.shape

        def split(layer):
            return layer(x).reshape(b, t, self.heads, d // self.heads).transpose(1, 2)

        ctx = F.scaled_dot_product_attention(
            split(self.query), split(self.key), split(self.value), dropout_p=0.1 if self.training else 0.0
        )
        x = self.attn_norm(x + F.dropout(self.attn_out(ctx.transpose(1, 2).reshape(b, t, d)), 0.1, self.training))
        ff = F.dropout(self.output(F.gelu(self.intermediate(x))), 0.1, self.training)
        return self.out_norm(x + ff)


class Bert(nn.Module):
    """Hugging Face's BertModel (post-norm, eps 1e-12, exact GELU, dropout 0.1,
    tanh pooler) plus BertForSequenceClassification's head."""

    def __init__(self, c):
        super().__init__()
        d = c["hidden"]
        self.word = nn.Embedding(c["vocab_size"], d)
        self.position = nn.Embedding(c["max_position"], d)
        self.token_type = nn.Embedding(c["type_vocab"], d)
        for e in (self.word, self.position, self.token_type):
            if e.weight.device.type != "meta":
                nn.init.normal_(e.weight, std=0.02)
        self.emb_norm = nn.LayerNorm(d, eps=1e-12)
        self.layers = nn.Sequential(*[BertLayer(c) for _ in range(c["layers"])])
        self.pooler = _linear(d, d)
        self.classifier = _linear(d, c["num_classes"])

    def forward(self, ids):
        t = ids.shape[1]
        pos = torch.arange(t, device=ids.device).unsqueeze(0)
        x = self.word(ids) + self.position(pos) + self.token_type(torch.zeros_like(ids))
        x = F.dropout(self.emb_norm(x), 0.1, self.training)
        x = self.layers(x)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return self.classifier(F.dropout(pooled, 0.1, self.training))


def _rotate_half(x):
    a, b = x.chunk(2, -1)
    return torch.cat([-b, a], -1)


def rotary_tables(t, head_dim, theta, device):
    """(cos, sin) of rotary embeddings for positions 0..t-1, in Hugging Face
    Llama's layout (the two halves of each head rotate together)."""
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    freqs = torch.outer(torch.arange(t, device=device, dtype=torch.float32), inv)
    emb = torch.cat([freqs, freqs], -1)
    return emb.cos(), emb.sin()


def _decoder_linear(i, o, bias, std):
    layer = nn.Linear(i, o, bias=bias)
    if layer.weight.device.type != "meta":
        nn.init.normal_(layer.weight, std=std)
        if bias:
            nn.init.zeros_(layer.bias)
    return layer


class DecoderBlock(nn.Module):
    """A pre-norm decoder block: causal self-attention (grouped-query when
    kv_heads < heads; queries, keys and values from one fused projection)
    and a GELU or SwiGLU feed-forward block (gate and up fused)."""

    def __init__(self, c):
        super().__init__()
        d, h, kv = c["hidden"], c["heads"], c["kv_heads"]
        self.heads, self.kv_heads, self.head_dim = h, kv, d // h
        self.swiglu = c["mlp"] == "swi_glu"
        self.dropout = 0.1 if c["dropout"] else 0.0
        bias = c["bias"]
        # GPT-2 scales the init of the projections into the residual stream.
        out_std = 0.02 / (2 * c["layers"]) ** 0.5 if c["norm"] == "layer_norm" else 0.02
        norm = (lambda: nn.LayerNorm(d, eps=1e-5)) if c["norm"] == "layer_norm" else (lambda: nn.RMSNorm(d, eps=1e-5))
        self.norm1, self.norm2 = norm(), norm()
        self.qkv = _decoder_linear(d, d + 2 * kv * self.head_dim, bias, 0.02)
        self.o = _decoder_linear(d, d, bias, out_std)
        i = c["intermediate"]
        self.up = _decoder_linear(d, 2 * i if self.swiglu else i, bias, 0.02)
        self.down = _decoder_linear(i, d, bias, out_std)

    def forward(self, x, rope):
        b, t, d = x.shape
        hd = self.head_dim
        qkv = self.qkv(self.norm1(x))
        q, k, v = qkv.split([d, self.kv_heads * hd, self.kv_heads * hd], -1)
        q = q.view(b, t, self.heads, hd).transpose(1, 2)
        k = k.view(b, t, self.kv_heads, hd).transpose(1, 2)
        v = v.view(b, t, self.kv_heads, hd).transpose(1, 2)
        if rope is not None:
            cos, sin = rope[0].to(q.dtype), rope[1].to(q.dtype)
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
        a = F.scaled_dot_product_attention(
            q,
            k,
            v,
            is_causal=True,
            enable_gqa=self.kv_heads != self.heads,
            dropout_p=self.dropout if self.training else 0.0,
        )
        x = x + F.dropout(self.o(a.transpose(1, 2).reshape(b, t, d)), self.dropout, self.training)
        y = self.up(self.norm2(x))
        if self.swiglu:
            gate, up = y.chunk(2, -1)
            y = F.silu(gate) * up
        else:
            y = F.gelu(y, approximate="tanh")
        return x + F.dropout(self.down(y), self.dropout, self.training)


class Decoder(nn.Module):
    """A decoder-only language model: Hugging Face's GPT2LMHeadModel
    (learned positions, LayerNorm, GELU, biases, tied head, dropout 0.1) or
    LlamaForCausalLM (rotary positions, RMSNorm, SwiGLU, grouped-query
    attention, no biases) as the catalogue's config says. Returns logits."""

    def __init__(self, c):
        super().__init__()
        d = c["hidden"]
        self.embed = nn.Embedding(c["vocab_size"], d)
        self.pos = nn.Embedding(c["max_position"], d) if c["positions"] == "learned" else None
        for e in (self.embed, self.pos):
            if e is not None and e.weight.device.type != "meta":
                nn.init.normal_(e.weight, std=0.02)
        self.blocks = nn.ModuleList([DecoderBlock(c) for _ in range(c["layers"])])
        self.norm = nn.LayerNorm(d, eps=1e-5) if c["norm"] == "layer_norm" else nn.RMSNorm(d, eps=1e-5)
        self.head = None if c["tie_embeddings"] else _decoder_linear(d, c["vocab_size"], False, 0.02)
        self.rotary = c["positions"] == "rotary"
        self.theta = float(c["rope_theta"])
        self.head_dim = d // c["heads"]
        self.dropout = 0.1 if c["dropout"] else 0.0

    def forward(self, ids):
        t = ids.shape[1]
        x = self.embed(ids)
        if self.pos is not None:
            x = x + self.pos(torch.arange(t, device=ids.device))
        x = F.dropout(x, self.dropout, self.training)
        rope = rotary_tables(t, self.head_dim, self.theta, ids.device) if self.rotary else None
        for block in self.blocks:
            x = block(x, rope)
        x = self.norm(x)
        return F.linear(x, self.embed.weight if self.head is None else self.head.weight)


_SDPA_NAMES = {
    "FLASH_ATTENTION": "flash attention",
    "EFFICIENT_ATTENTION": "memory-efficient attention",
    "CUDNN_ATTENTION": "cuDNN attention",
    "MATH": "the unfused math kernel",
    "OVERRIDEABLE": "a backend registered from outside PyTorch",
}


def sdpa_choice(attention: Attention | None, device, dtype):
    """Which kernel ``F.scaled_dot_product_attention`` picks for the model's
    attention (its shape, compute dtype, causal mask, grouped-query heads and
    training dropout) on ``device``, as the ``execution`` line says it; None for
    a model without attention."""
    if attention is None:
        return None
    t, h, kv, hd = attention.tokens, attention.heads, attention.kv_heads, attention.head_dim
    dropout = attention.dropout
    try:
        from torch.nn.attention import SDPBackend

        q = torch.zeros(1, h, t, hd, device=device, dtype=dtype)
        k = torch.zeros(1, kv, t, hd, device=device, dtype=dtype)
        choice = SDPBackend(
            torch._fused_sdp_choice(
                q, k, k, dropout_p=0.1 if dropout else 0.0, is_causal=attention.causal, enable_gqa=kv != h
            )
        )
        name = _SDPA_NAMES.get(choice.name, choice.name)
    except Exception as e:  # a private function: say so rather than guess
        return f"attention: F.scaled_dot_product_attention (its kernel choice could not be read: {first_line(e)})"
    why = ", with attention dropout while training" if dropout else ""
    return f"attention: F.scaled_dot_product_attention, {name} (SDPA's choice for the model's shape{why})"


class FraudTransformer(nn.Module):
    """The fraud-detection transformer of a TensorFlow→PyTorch migration, its own
    code: token embedding plus a learned position table, PyTorch's
    nn.TransformerEncoder of nn.TransformerEncoderLayer(d_model, nhead,
    dim_feedforward, dropout=0.1, batch_first=True) (post-norm, ReLU), the
    mean over positions and a linear head (one logit: the published code's sigmoid is
    in the binary cross-entropy). Every sequence is full length."""

    def __init__(self, c):
        super().__init__()
        d = c["hidden"]
        self.embedding = nn.Embedding(c["vocab_size"], d)
        self.pos_encoder = nn.Embedding(c["max_position"], d)
        layer = nn.TransformerEncoderLayer(
            d_model=d, nhead=c["heads"], dim_feedforward=c["intermediate"], batch_first=True, dropout=0.1
        )
        self.transformer = nn.TransformerEncoder(layer, num_layers=c["layers"], enable_nested_tensor=False)
        self.fc = nn.Linear(d, c["num_classes"])

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        x = self.embedding(ids) + self.pos_encoder(positions)
        return self.fc(self.transformer(x).mean(dim=1))


def build(config):
    return {"vit": Vit, "resnet": ResNet, "bert": Bert, "decoder": Decoder, "encoder": FraudTransformer}[
        config["family"]
    ](config)


def classification_loss(out, y, binary: bool, reduction="mean"):
    """Cross-entropy over the classes, or (``binary``, the model's traits)
    binary cross-entropy on one logit."""
    if binary:
        return F.binary_cross_entropy_with_logits(out.float().squeeze(-1), y.float(), reduction=reduction)
    return F.cross_entropy(out.float().flatten(0, -2), y.flatten(), reduction=reduction)


def predicted_classes(out, binary: bool):
    """Predicted classes (one logit: positive when it is above 0)."""
    if binary:
        return (out.squeeze(-1) > 0).long()
    return out.argmax(-1)


def count_params(config):
    with torch.device("meta"):
        model = build(config)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
