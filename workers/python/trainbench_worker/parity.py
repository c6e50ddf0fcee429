"""Parity of the PyTorch worker's decoders with the ecosystem's reference
implementations (issue 17): Hugging Face ``GPT2LMHeadModel`` for GPT-2-style
configs and ``LlamaForCausalLM`` for Llama-style ones. The reference is built
from the same config, its weights are copied into the studio's model (a
mapping, not a re-initialisation), and both run the same token ids in eval
mode (no dropout): the logits must agree, and so must the parameter counts.

``python -m trainbench_worker.parity`` reads a catalogue model config (JSON,
``trainbench describe MODEL --json``'s ``config``) on stdin and prints one
JSON object: ``reference``, ``params`` (studio), ``reference_params``,
``max_abs_diff`` and ``max_abs_logit`` of the logits, ``tokens``.
"""
import json
import sys

import torch

from .torch_worker import Decoder


def reference_model(c):
    """The Hugging Face model for a catalogue decoder config, and its name."""
    import transformers

    if c["norm"] == "layer_norm":
        cfg = transformers.GPT2Config(
            vocab_size=c["vocab_size"], n_positions=c["max_position"], n_embd=c["hidden"],
            n_layer=c["layers"], n_head=c["heads"], n_inner=c["intermediate"],
            activation_function="gelu_new", layer_norm_epsilon=1e-5,
            resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1, tie_word_embeddings=c["tie_embeddings"],
            bos_token_id=None, eos_token_id=None)
        return transformers.GPT2LMHeadModel(cfg), f"transformers {transformers.__version__} GPT2LMHeadModel"
    cfg = transformers.LlamaConfig(
        vocab_size=c["vocab_size"], hidden_size=c["hidden"], intermediate_size=c["intermediate"],
        num_hidden_layers=c["layers"], num_attention_heads=c["heads"], num_key_value_heads=c["kv_heads"],
        max_position_embeddings=c["max_position"], rms_norm_eps=1e-5, tie_word_embeddings=c["tie_embeddings"],
        attention_bias=c["bias"], mlp_bias=c["bias"], rope_theta=float(c["rope_theta"]),
        rope_parameters={"rope_type": "default", "rope_theta": float(c["rope_theta"])})
    return transformers.LlamaForCausalLM(cfg), f"transformers {transformers.__version__} LlamaForCausalLM"


@torch.no_grad()
def copy_weights(ref, ours, c):
    """Copies the reference's weights into the studio's model."""
    sd = ref.state_dict()
    ours.embed.weight.copy_(sd[next(k for k in sd if k.endswith(("wte.weight", "embed_tokens.weight")))])
    if c["norm"] == "layer_norm":
        t = "transformer."
        ours.pos.weight.copy_(sd[t + "wpe.weight"])
        for i, b in enumerate(ours.blocks):
            h = f"{t}h.{i}."
            b.norm1.weight.copy_(sd[h + "ln_1.weight"])
            b.norm1.bias.copy_(sd[h + "ln_1.bias"])
            # Conv1D stores (in, out): transposed against nn.Linear.
            b.qkv.weight.copy_(sd[h + "attn.c_attn.weight"].T)
            b.qkv.bias.copy_(sd[h + "attn.c_attn.bias"])
            b.o.weight.copy_(sd[h + "attn.c_proj.weight"].T)
            b.o.bias.copy_(sd[h + "attn.c_proj.bias"])
            b.norm2.weight.copy_(sd[h + "ln_2.weight"])
            b.norm2.bias.copy_(sd[h + "ln_2.bias"])
            b.up.weight.copy_(sd[h + "mlp.c_fc.weight"].T)
            b.up.bias.copy_(sd[h + "mlp.c_fc.bias"])
            b.down.weight.copy_(sd[h + "mlp.c_proj.weight"].T)
            b.down.bias.copy_(sd[h + "mlp.c_proj.bias"])
        ours.norm.weight.copy_(sd[t + "ln_f.weight"])
        ours.norm.bias.copy_(sd[t + "ln_f.bias"])
    else:
        for i, b in enumerate(ours.blocks):
            h = f"model.layers.{i}."
            b.norm1.weight.copy_(sd[h + "input_layernorm.weight"])
            b.qkv.weight.copy_(torch.cat([sd[h + f"self_attn.{p}_proj.weight"] for p in "qkv"]))
            b.o.weight.copy_(sd[h + "self_attn.o_proj.weight"])
            b.norm2.weight.copy_(sd[h + "post_attention_layernorm.weight"])
            b.up.weight.copy_(torch.cat([sd[h + "mlp.gate_proj.weight"], sd[h + "mlp.up_proj.weight"]]))
            b.down.weight.copy_(sd[h + "mlp.down_proj.weight"])
        ours.norm.weight.copy_(sd["model.norm.weight"])
    if ours.head is not None:
        ours.head.weight.copy_(sd["lm_head.weight"])


def check(c, batch=2, tokens=None):
    torch.manual_seed(0)
    ref, name = reference_model(c)
    ours = Decoder(c)
    copy_weights(ref, ours, c)
    ref.eval()
    ours.eval()
    t = min(tokens or c["seq_len"], c["seq_len"])
    ids = torch.randint(0, c["vocab_size"], (batch, t))
    with torch.no_grad():
        want = ref(input_ids=ids).logits
        got = ours(ids)
    return {
        "reference": name,
        "params": sum(p.numel() for p in ours.parameters()),
        "reference_params": sum(p.numel() for p in ref.parameters()),
        "max_abs_diff": float((want - got).abs().max()),
        "max_abs_logit": float(want.abs().max()),
        "tokens": t,
    }


def main():
    torch.set_num_threads(1)
    print(json.dumps(check(json.load(sys.stdin))))


if __name__ == "__main__":
    main()
