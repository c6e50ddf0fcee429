"""Parity of the studio's decoders with the ecosystem's reference
implementations: Hugging Face ``GPT2LMHeadModel`` for GPT-2-style
configs and ``LlamaForCausalLM`` for Llama-style ones. The reference is built
from the same config, its weights are copied into the studio's model (a
mapping, not a re-initialisation), and both run the same token ids in eval
mode (no dropout): the logits must agree, and so must the parameter counts.

``python -m trainbench_worker.parity`` reads a catalogue model config (JSON,
``trainbench describe MODEL --json``'s ``config``) on stdin and prints one
JSON object: ``reference``, ``params`` (studio), ``reference_params``,
``max_abs_diff`` and ``max_abs_logit`` of the logits, ``tokens``.

The JAX and TensorFlow workers' decoders are checked against the same
reference across environments (neither has torch): ``--export DIR`` (in the
torch environment) also writes the PyTorch worker's weights, once copied from
the reference, with the token ids and the reference's logits to DIR as NumPy
files; ``--framework jax|tensorflow DIR`` (in that framework's environment)
loads those weights into its own decoder, runs the same ids and prints the
same JSON against the reference's logits.
"""

import json
import os
import sys

import numpy as np


def reference_model(c):
    """The Hugging Face model for a catalogue decoder config, and its name."""
    import transformers

    if c["norm"] == "layer_norm":
        cfg = transformers.GPT2Config(
            vocab_size=c["vocab_size"],
            n_positions=c["max_position"],
            n_embd=c["hidden"],
            n_layer=c["layers"],
            n_head=c["heads"],
            n_inner=c["intermediate"],
            activation_function="gelu_new",
            layer_norm_epsilon=1e-5,
            resid_pdrop=0.1,
            embd_pdrop=0.1,
            attn_pdrop=0.1,
            tie_word_embeddings=c["tie_embeddings"],
            bos_token_id=None,
            eos_token_id=None,
        )
        return transformers.GPT2LMHeadModel(cfg), f"transformers {transformers.__version__} GPT2LMHeadModel"
    cfg = transformers.LlamaConfig(
        vocab_size=c["vocab_size"],
        hidden_size=c["hidden"],
        intermediate_size=c["intermediate"],
        num_hidden_layers=c["layers"],
        num_attention_heads=c["heads"],
        num_key_value_heads=c["kv_heads"],
        max_position_embeddings=c["max_position"],
        rms_norm_eps=1e-5,
        tie_word_embeddings=c["tie_embeddings"],
        attention_bias=c["bias"],
        mlp_bias=c["bias"],
        rope_theta=float(c["rope_theta"]),
        rope_parameters={"rope_type": "default", "rope_theta": float(c["rope_theta"])},
    )
    return transformers.LlamaForCausalLM(cfg), f"transformers {transformers.__version__} LlamaForCausalLM"


def copy_weights(ref, ours, c):
    """Copies the reference's weights into the studio's model."""
    import torch

    with torch.no_grad():
        _copy(ref.state_dict(), ours, c)


def _copy(sd, ours, c):
    import torch

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


def check(c, batch=2, tokens=None, export=None):
    import torch

    from .torch_models import Decoder

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
    result = {
        "reference": name,
        "params": sum(p.numel() for p in ours.parameters()),
        "reference_params": sum(p.numel() for p in ref.parameters()),
        "max_abs_diff": float((want - got).abs().max()),
        "max_abs_logit": float(want.abs().max()),
        "tokens": t,
    }
    if export:
        os.makedirs(export, exist_ok=True)
        np.savez(os.path.join(export, "weights.npz"), **{k: v.numpy() for k, v in ours.state_dict().items()})
        np.save(os.path.join(export, "ids.npy"), ids.numpy().astype(np.int32))
        np.save(os.path.join(export, "logits.npy"), want.numpy())
        with open(os.path.join(export, "reference.json"), "w") as f:
            json.dump({"reference": name, "reference_params": result["reference_params"]}, f)
    return result


def _jax_logits(c, w, ids):
    """The JAX worker's decoder with the PyTorch worker's weights ``w``
    (torch names; nn.Linear's (out, in) weights are Flax's kernels transposed)."""
    import jax

    from . import jax_models

    def norm(prefix):
        out = {"scale": w[prefix + ".weight"]}
        if prefix + ".bias" in w:
            out["bias"] = w[prefix + ".bias"]
        return out

    def dense(prefix):
        out = {"kernel": w[prefix + ".weight"].T}
        if prefix + ".bias" in w:
            out["bias"] = w[prefix + ".bias"]
        return out

    params = {"embed": {"embedding": w["embed.weight"]}, "norm": norm("norm")}
    if "pos.weight" in w:
        params["pos"] = {"embedding": w["pos.weight"]}
    if "head.weight" in w:
        params["head"] = dense("head")
    d, h, kv = c["hidden"], c["heads"], c["kv_heads"]
    hd = d // h

    def heads(weight, bias, n):
        # An nn.Linear slice (n·hd, d) → Flax's DenseGeneral kernel (d, n, hd).
        out = {"kernel": weight.T.reshape(d, n, hd)}
        if bias is not None:
            out["bias"] = bias.reshape(n, hd)
        return out

    for i in range(c["layers"]):
        b = f"blocks.{i}"
        qkv_w, qkv_b = w[b + ".qkv.weight"], w.get(b + ".qkv.bias")
        cut = [0, d, d + kv * hd, d + 2 * kv * hd]
        q, k, v = (
            heads(qkv_w[cut[j] : cut[j + 1]], None if qkv_b is None else qkv_b[cut[j] : cut[j + 1]], n)
            for j, n in enumerate((h, kv, kv))
        )
        o = {"kernel": w[b + ".o.weight"].T.reshape(h, hd, d)}
        if b + ".o.bias" in w:
            o["bias"] = w[b + ".o.bias"]
        params[f"blocks_{i}"] = {
            "norm1": norm(b + ".norm1"),
            "norm2": norm(b + ".norm2"),
            "query": q,
            "key": k,
            "value": v,
            "o": o,
            **{n: dense(f"{b}.{n}") for n in ("up", "down")},
        }
    model = jax_models.build(c)
    shapes = jax.eval_shape(lambda: jax_models._init_variables(model, c, jax.random.PRNGKey(0)))["params"]
    got_shapes = jax.tree.map(lambda a: a.shape, params)
    if got_shapes != jax.tree.map(lambda a: a.shape, shapes):
        raise SystemExit(f"the mapped parameters do not match the JAX decoder's: {got_shapes}")
    logits = model.apply({"params": params}, ids, train=False)
    return np.asarray(logits), jax_models._size(params), f"JAX {jax.__version__}"


def _tf_logits(c, w, ids):
    """The TensorFlow worker's decoder with the PyTorch worker's weights."""
    import tensorflow as tf

    from . import tf_models

    model = tf_models.build(c)

    def norm(layer, prefix):
        if c["norm"] == "layer_norm":
            layer.gamma.assign(w[prefix + ".weight"])
            layer.beta.assign(w[prefix + ".bias"])
        else:
            layer.scale.assign(w[prefix + ".weight"])

    def dense(layer, prefix):
        layer.kernel.assign(w[prefix + ".weight"].T)
        if layer.use_bias:
            layer.bias.assign(w[prefix + ".bias"])

    model.embed.embeddings.assign(w["embed.weight"])
    if model.pos is not None:
        model.pos.embeddings.assign(w["pos.weight"])

    def keras_attention(attn, prefix):
        # torch's fused qkv (3d, d) → Keras' query, key, value (d, heads, head_dim);
        # its output (d, d) → (heads, head_dim, d).
        d, h = c["hidden"], c["heads"]
        qkv_w, qkv_b = w[prefix + ".qkv.weight"], w[prefix + ".qkv.bias"]
        for j, part in enumerate((attn._query_dense, attn._key_dense, attn._value_dense)):
            part.kernel.assign(qkv_w[j * d : (j + 1) * d].T.reshape(d, h, d // h))
            part.bias.assign(qkv_b[j * d : (j + 1) * d].reshape(h, d // h))
        attn._output_dense.kernel.assign(w[prefix + ".o.weight"].T.reshape(h, d // h, d))
        attn._output_dense.bias.assign(w[prefix + ".o.bias"])

    for i, b in enumerate(model.blocks):
        norm(b.norm1, f"blocks.{i}.norm1")
        norm(b.norm2, f"blocks.{i}.norm2")
        if b.keras:
            keras_attention(b.attn, f"blocks.{i}")
        for n in ("up", "down") if b.keras else ("qkv", "o", "up", "down"):
            dense(getattr(b, n), f"blocks.{i}.{n}")
    norm(model.norm, "norm")
    if model.head is not None:
        dense(model.head, "head")
    logits = model(tf.constant(ids), training=False)
    return logits.numpy(), tf_models._count(model), f"TensorFlow {tf.__version__}"


def check_framework(c, framework, directory):
    w = dict(np.load(os.path.join(directory, "weights.npz")))
    ids = np.load(os.path.join(directory, "ids.npy"))
    want = np.load(os.path.join(directory, "logits.npy"))
    with open(os.path.join(directory, "reference.json")) as f:
        ref = json.load(f)
    got, params, version = {"jax": _jax_logits, "tensorflow": _tf_logits}[framework](c, w, ids)
    return {
        "framework": version,
        "reference": ref["reference"],
        "params": int(params),
        "reference_params": ref["reference_params"],
        "max_abs_diff": float(np.abs(want - got).max()),
        "max_abs_logit": float(np.abs(want).max()),
        "tokens": int(ids.shape[1]),
    }


def main():
    c = json.load(sys.stdin)
    c.setdefault("family", "decoder")
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "--framework":
        print(json.dumps(check_framework(c, args[1], args[2])))
        return
    import torch

    torch.set_num_threads(1)
    export = args[1] if len(args) == 2 and args[0] == "--export" else None
    if args and export is None:
        raise SystemExit("usage: python -m trainbench_worker.parity [--export DIR | --framework jax|tensorflow DIR]")
    print(json.dumps(check(c, export=export)))


if __name__ == "__main__":
    main()
