"""Writes a Llama-3.2-shaped decoder as a torch.export archive for bench/real-size.ts.

    python make_model.py --shape 1b --dtype bfloat16 --max-cache 1024 --out llama-1b-bf16.pt2

The model is python-bridge/bench_models' (the published configuration's
shape, transformers' ``TorchExportableModuleForDecoderOnlyLM`` with a static
cache), with every matrix set from its name (hash_fill.py) before export, so
the GPU machine can write the same weights into the program's skeleton.
Run with trtx's managed Python; transformers is found as bench_models finds it.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent / "python-bridge" / "bench_models"))
import hash_fill
import llama_shapes


def fill(module: torch.nn.Module) -> int:
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
    ap.add_argument("--shape", choices=sorted(llama_shapes.SHAPES), required=True)
    ap.add_argument("--dtype", choices=llama_shapes.DTYPES, required=True)
    ap.add_argument("--max-cache", type=int, default=1024)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    t0 = time.monotonic()
    filled: list[int] = []
    ep = llama_shapes.export_decode_step(a.shape, a.dtype, a.max_cache, prepare=lambda m: filled.append(fill(m)))
    torch.export.save(ep, a.out)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(
        f"wrote {a.out}: llama {a.shape} {a.dtype}, {filled[0]} weight bytes, cache {a.max_cache}, {time.monotonic() - t0:.1f} s, peak RSS {rss}"
    )


if __name__ == "__main__":
    main()
