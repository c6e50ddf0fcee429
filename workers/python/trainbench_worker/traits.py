"""The model's traits: what the workers do differently by model (what it
takes, what it is trained on, the shape of its self-attention with its
causal mask and its dropout).

They come in the plan (``traits``, the core crate's ``ModelTraits``) for a
catalogue model. A library or file model's plan carries ``null``: only the
installed library (or the person's file) says whether ``hf:bert`` classifies
or a module takes tokens, so its builder sets them, once, with
``Plan.set_traits``, before anything reads them. Nothing else decides by the
family's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Input = Literal["image", "tokens"]
Objective = Literal["classes", "binary", "next_token"]


@dataclass(frozen=True)
class Attention:
    """``Attention`` in crates/core: the self-attention as its kernels see it."""

    tokens: int
    heads: int
    kv_heads: int
    head_dim: int
    causal: bool
    dropout: bool


@dataclass(frozen=True)
class Traits:
    """``ModelTraits`` in crates/core."""

    input: Input
    objective: Objective
    attention: Attention | None = None

    @property
    def tokens(self) -> bool:
        """The model takes token ids (else images, NCHW in the harness's data)."""
        return self.input == "tokens"

    @property
    def next_token(self) -> bool:
        """Each position predicts the next token: a sample is ``seq_len + 1``
        tokens, inputs and, one on, targets."""
        return self.objective == "next_token"

    @property
    def binary(self) -> bool:
        """One logit under a sigmoid, binary cross-entropy."""
        return self.objective == "binary"

    def trained_as(self) -> str:
        """What ``describe`` answers: ``image``, ``bert`` (classified tokens)
        or ``decoder`` (next tokens)."""
        if self.next_token:
            return "decoder"
        return "bert" if self.tokens else "image"


# What a library or file model's builder sets.
IMAGE = Traits("image", "classes")
CLASSIFIED_TOKENS = Traits("tokens", "classes")
NEXT_TOKENS = Traits("tokens", "next_token")


def of_plan(obj: dict[str, Any] | None) -> Traits | None:
    """The plan's ``traits`` (checked against the schema already), or None."""
    if obj is None:
        return None
    a = obj.get("attention")
    attention = None if a is None else Attention(**a)
    return Traits(obj["input"], obj["objective"], attention)
