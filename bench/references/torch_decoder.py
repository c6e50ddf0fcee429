"""A small GPT-2 as a PyTorch user trains it: Hugging Face's
``GPT2LMHeadModel`` (2 layers, width 128, 2 heads, vocabulary 256, 128
positions, dropout 0.1, tied head, its default SDPA attention), a plain eager
loop with ``torch.optim.AdamW`` and the next-token loss over every position:
445,952 parameters, as the studio's ``gpt2_tiny``. Samples are sequences of
128 tokens.

    python bench/references/torch_decoder.py [--batch 8] [--steps 20] [--threads 1]
"""

import torch
import torch.nn.functional as F
import transformers
from timing import arguments, measure, report

SEQ, VOCAB = 128, 256


def main():
    a = arguments(batch=8).parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(
            vocab_size=VOCAB,
            n_positions=SEQ,
            n_embd=128,
            n_layer=2,
            n_head=2,
            bos_token_id=VOCAB - 1,
            eos_token_id=VOCAB - 1,
        )
    ).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.05)
    tokens = torch.randint(0, VOCAB, (a.batch, SEQ + 1))

    def step():
        logits = model(input_ids=tokens[:, :-1]).logits
        loss = F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    result = measure(step, lambda loss: loss.item(), a)
    report(
        "pytorch",
        "gpt2_tiny",
        sum(p.numel() for p in model.parameters()),
        a,
        result,
        version=torch.__version__,
        transformers=transformers.__version__,
    )


if __name__ == "__main__":
    main()
