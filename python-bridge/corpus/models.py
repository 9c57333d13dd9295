"""The models of trtx's real-program corpus: small, deterministic, and shaped
like the programs trtx exists for (see python-bridge/corpus/README.md).

Dimensions are tiny on purpose: the corpus is exported on a 2-core machine,
and what it exercises is the layout ExecuTorch gives a program, not compute.
Every model is float32 and takes its hidden states as input (an application
embeds the tokens), updates its caches with ``index_copy_`` along the sequence
dimension (dim 2 of ``[batch, heads, max_seq, head_dim]``), the form
Torch-TensorRT lowers to a KV-cache update written in place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch import nn

DIM = 16
HEADS = 2
HEAD_DIM = DIM // HEADS
MAX_SEQ = 8
PREFILL = 4
VOCAB = 32


class RMSNorm(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.weight


class Attention(nn.Module):
    """Multi-head attention over a static KV cache written at ``input_pos``."""

    def __init__(self) -> None:
        super().__init__()
        self.wq = nn.Linear(DIM, DIM, bias=False)
        self.wk = nn.Linear(DIM, DIM, bias=False)
        self.wv = nn.Linear(DIM, DIM, bias=False)
        self.wo = nn.Linear(DIM, DIM, bias=False)
        self.register_buffer("k_cache", torch.zeros(1, HEADS, MAX_SEQ, HEAD_DIM), persistent=False)
        self.register_buffer("v_cache", torch.zeros(1, HEADS, MAX_SEQ, HEAD_DIM), persistent=False)

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        t = x.shape[1]
        q = self.wq(x).view(1, t, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.wk(x).view(1, t, HEADS, HEAD_DIM).transpose(1, 2)
        v = self.wv(x).view(1, t, HEADS, HEAD_DIM).transpose(1, 2)
        self.k_cache.index_copy_(2, input_pos, k)
        self.v_cache.index_copy_(2, input_pos, v)
        # Causal over the cache: position j is visible from query i when j <= input_pos[i].
        visible = torch.arange(MAX_SEQ).view(1, MAX_SEQ) <= input_pos.view(t, 1)
        scores = (q @ self.k_cache.transpose(2, 3)) / math.sqrt(HEAD_DIM)
        scores = scores.masked_fill(~visible, -1e4)
        out = torch.softmax(scores, dim=-1) @ self.v_cache
        return self.wo(out.transpose(1, 2).reshape(1, t, DIM))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(DIM)
        self.attn = Attention()
        self.mlp_norm = RMSNorm(DIM)
        self.w1 = nn.Linear(DIM, 2 * DIM, bias=False)
        self.w3 = nn.Linear(DIM, 2 * DIM, bias=False)
        self.w2 = nn.Linear(2 * DIM, DIM, bias=False)

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        h = x + self.attn(self.attn_norm(x), input_pos)
        g = self.mlp_norm(h)
        return h + self.w2(nn.functional.silu(self.w1(g)) * self.w3(g))


class TinyLlama(nn.Module):
    """A Llama-style decoder: RMSNorm, attention with static KV caches, SwiGLU MLP."""

    def __init__(self, layers: int = 2) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(layers))
        self.norm = RMSNorm(DIM)
        self.output = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, input_pos)
        return self.output(self.norm(x))


class ConvState(nn.Module):
    """A short causal convolution's state, ring-shifted by one column per step and copied back."""

    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.register_buffer("conv_state", torch.zeros(1, DIM, width), persistent=False)
        self.kernel = nn.Parameter(torch.linspace(-1.0, 1.0, width).view(width, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shifted = torch.cat([self.conv_state[:, :, 1:], x.reshape(1, DIM, 1)], dim=-1)
        self.conv_state.copy_(shifted)
        return (shifted @ self.kernel).view(1, 1, DIM)


class KvConv(nn.Module):
    """One decode step holding both kinds of mutable buffer: KV caches and a convolution state."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = Attention()
        self.conv = ConvState()
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        h = x + self.attn(x, input_pos)
        return self.head(h + self.conv(h))


class SplitCopyBack(nn.Module):
    """The caches in one engine, the convolution state's copy-back in a second:
    the gate between them (``aten.mul.Tensor``) is left to ExecuTorch, as a
    Torch-TensorRT user leaves an op to PyTorch with ``torch_executed_ops``."""

    TORCH_EXECUTED_OPS = ("aten.mul.Tensor",)

    def __init__(self) -> None:
        super().__init__()
        self.attn = Attention()
        self.conv = ConvState()
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        h = self.attn(x, input_pos)
        gated = h * h
        return self.head(self.conv(gated))


class Stateful(nn.Module):
    """A decode step whose running statistics start from a stored state
    (``InitializedMutableBufferPass``): ``running_scale`` begins at ones and
    ``step`` at the position it was saved at, beside an ordinary KV cache."""

    INITIALIZED = ("running_scale", "step")

    def __init__(self) -> None:
        super().__init__()
        self.attn = Attention()
        self.register_buffer("running_scale", torch.ones(1, 1, DIM), persistent=False)
        self.register_buffer("step", torch.full((1,), 3.0), persistent=False)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        h = self.attn(x, input_pos)
        self.running_scale.mul_(0.75).add_(0.25 * h.abs())
        self.step.add_(1.0)
        return self.head(h / self.running_scale) + self.step


def _example(t: int, start: int = 0, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(1, t, DIM, generator=g), torch.arange(start, start + t, dtype=torch.long)


@dataclass
class CorpusModel:
    name: str
    description: str
    make: Callable[[], nn.Module]
    # method name -> example inputs
    methods: dict[str, tuple[torch.Tensor, ...]]
    torch_executed_ops: tuple[str, ...] = ()
    min_block_size: int = 1
    initialized_buffers: tuple[str, ...] = ()
    share_mutable_buffers: bool = False
    options: dict[str, Any] = field(default_factory=dict)


def _decoder_methods() -> dict[str, tuple[torch.Tensor, ...]]:
    return {"prefill": _example(PREFILL), "decode": _example(1, start=PREFILL)}


CORPUS: list[CorpusModel] = [
    CorpusModel(
        "llama",
        "Llama-style decoder (2 layers), static KV caches, prefill and decode",
        TinyLlama,
        _decoder_methods(),
    ),
    CorpusModel(
        "kv-conv",
        "decode step with KV caches and a ring-shifted convolution state (copy-back) in one engine",
        KvConv,
        {"forward": _example(1, start=2)},
    ),
    CorpusModel(
        "split-copyback",
        "KV caches in one engine, the convolution state's copy-back on a second engine",
        SplitCopyBack,
        {"forward": _example(1, start=2)},
        torch_executed_ops=SplitCopyBack.TORCH_EXECUTED_OPS,
    ),
    CorpusModel(
        "stateful",
        "decode step with KV caches and buffers that carry initial state",
        Stateful,
        {"forward": _example(1, start=2)},
        initialized_buffers=Stateful.INITIALIZED,
    ),
    CorpusModel(
        "llama-shared",
        "the Llama-style decoder with its caches shared between prefill and decode",
        TinyLlama,
        _decoder_methods(),
        share_mutable_buffers=True,
    ),
]


def build_module(model: CorpusModel) -> nn.Module:
    torch.manual_seed(0)
    module = model.make().eval()
    for p in module.parameters():
        p.requires_grad_(False)
    return module


def export_methods(model: CorpusModel) -> dict[str, Any]:
    """torch.export each method of one module instance (their buffers are the same tensors)."""
    module = build_module(model)
    with torch.no_grad():
        return {name: torch.export.export(module, inputs) for name, inputs in model.methods.items()}
