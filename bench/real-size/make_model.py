"""Writes a Llama-3.2-shaped decoder as a torch.export archive for bench/real-size.ts.

    python make_model.py --shape 1b --dtype bfloat16 --max-cache 1024 --out llama-1b-bf16.pt2

Built as a user of transformers builds one for ExecuTorch (transformers'
``TorchExportableModuleForDecoderOnlyLM`` with a static cache, the zoo's way:
python-bridge/zoo/models.py), from the published configuration's shape with
weights made from their names (hash_fill.py), nothing downloaded. Run with
transformers importable (the zoo's packages on PYTHONPATH).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hash_fill

# The published configurations' shapes (meta-llama/Llama-3.2-1B and -3B config.json).
SHAPES = {
    "1b": {
        "hidden_size": 2048,
        "num_hidden_layers": 16,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 8192,
        "vocab_size": 128256,
        "head_dim": 64,
    },
    "3b": {
        "hidden_size": 3072,
        "num_hidden_layers": 28,
        "num_attention_heads": 24,
        "num_key_value_heads": 8,
        "intermediate_size": 8192,
        "vocab_size": 128256,
        "head_dim": 128,
    },
    # The same structure at a size CI holds: grouped-query attention, tied embeddings, a real vocabulary.
    "ci": {
        "hidden_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "intermediate_size": 512,
        "vocab_size": 32000,
        "head_dim": 32,
    },
}
COMMON = {
    "tie_word_embeddings": True,
    "rope_theta": 500000.0,
    "rms_norm_eps": 1e-5,
    "max_position_embeddings": 131072,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "pad_token_id": 0,
}
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def fill(module: torch.nn.Module, dtype: str) -> int:
    """Every matrix (2-D or more) of `module` from its name; norms keep their ones. Returns the bytes filled."""
    filled = 0
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() < 2:
                continue
            flat = p.view(-1)
            seed = hash_fill.seed_of(name)
            for start in range(0, flat.numel(), hash_fill.CHUNK):
                n = min(hash_fill.CHUNK, flat.numel() - start)
                flat[start : start + n] = torch.from_numpy(hash_fill.values(seed, start, n)).to(p.dtype)
            filled += p.numel() * p.element_size()
    return filled


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", choices=sorted(SHAPES), required=True)
    ap.add_argument("--dtype", choices=sorted(DTYPES), required=True)
    ap.add_argument("--max-cache", type=int, default=1024)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    from transformers import AutoConfig, AutoModelForCausalLM, GenerationConfig
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

    t0 = time.monotonic()
    config = AutoConfig.for_model("llama", **SHAPES[a.shape], **COMMON)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=DTYPES[a.dtype]).eval()
    model.generation_config = GenerationConfig(
        use_cache=True, cache_implementation="static", cache_config={"batch_size": 1, "max_cache_len": a.max_cache}
    )
    wrapped = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=a.max_cache)
    weight_bytes = fill(wrapped, a.dtype)
    with torch.no_grad():
        ep = wrapped.export(input_ids=torch.tensor([[1]], dtype=torch.long), cache_position=torch.tensor([0], dtype=torch.long))
    torch.export.save(ep, a.out)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(
        f"wrote {a.out}: llama {a.shape} {a.dtype}, {weight_bytes} weight bytes, cache {a.max_cache}, {time.monotonic() - t0:.1f} s, peak RSS {rss}"
    )


if __name__ == "__main__":
    main()
