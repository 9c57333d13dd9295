"""A hand-written token-id decoder for `trtx export FILE.py:make_decoder`:
the corpus's Llama-style decoder (models.TinyLlama) behind a token
embedding, one decode step per execution (``tokens [1, 1]`` int64, ``input_pos
[1]``), static KV caches. Real LMs take token ids, so the engine's inputs
are integers and its cache writes come from the embedding, not from a float
input. Parameters keep ``requires_grad`` as a model built the documented way
does (model.eval(), no torch.no_grad()): the bridge lowers under no_grad.

    trtx export python-bridge/corpus/token_llama.py:make_decoder -o token-llama.pte --engine reference

``make_decoder_perturbed`` is the same model with one weight changed: its
reference outputs are not what the first model's program computes, so a
verify that compares with them must fail (test/real-export.test.ts).
"""

from __future__ import annotations

from typing import Any

import torch
from models import DIM, VOCAB, TinyLlama
from torch import nn


class TokenLlama(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.decoder = TinyLlama()

    def forward(self, tokens: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.embed(tokens), input_pos)


def build(seed: int = 0) -> TokenLlama:
    torch.manual_seed(seed)
    return TokenLlama().eval()


def make_decoder() -> dict[str, Any]:
    inputs = (torch.tensor([[3]], dtype=torch.long), torch.tensor([0], dtype=torch.long))
    return {"methods": {"decode": (build(), inputs)}}


def make_decoder_perturbed() -> dict[str, Any]:
    """The same decoder with one weight of its output head changed by 0.01."""
    model = build()
    with torch.no_grad():
        model.decoder.output.weight[0, 0] += 0.01
    inputs = (torch.tensor([[3]], dtype=torch.long), torch.tensor([0], dtype=torch.long))
    return {"methods": {"decode": (model, inputs)}}
