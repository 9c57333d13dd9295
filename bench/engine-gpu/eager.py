"""Eager PyTorch's CUDA decode step for the real-size benchmark's model (issue 40), on the GPU machine.

    python3 eager.py --shape 1b --dtype bfloat16 --max-cache 1024 --steps 5 --out DIR

The model is the one bench/real-size/make_model.py exported: python-bridge/bench_models'
decoder (transformers' TorchExportableModuleForDecoderOnlyLM with a static cache), its
matrices set from their names (hash_fill.py), so it holds the program's weights. Each
step feeds what trtx verify feeds the program at that step (trtx-step-v1: token id and
position both the step number) and writes the logits to DIR/eager.step-N.bin (raw
bytes, the model's dtype). DIR/eager.json holds each step's wall time (CUDA-synchronised)
and the copy bandwidths the comparison needs: pinned and pageable host-to-device, and
device-to-host, measured on this GPU.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "real-size"))
sys.path.insert(0, str(HERE.parent.parent / "python-bridge" / "bench_models"))
import llama_shapes
import make_model


def bandwidth(nbytes: int, pinned: bool, to_device: bool) -> float:
    """Bytes per second of one copy of `nbytes`, the median of 10 after 3 warm-ups."""
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned)
    dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    times = []
    for i in range(13):
        torch.cuda.synchronize()
        t = time.perf_counter()
        if to_device:
            dev.copy_(host, non_blocking=pinned)
        else:
            host.copy_(dev, non_blocking=pinned)
        torch.cuda.synchronize()
        if i >= 3:
            times.append(time.perf_counter() - t)
    return nbytes / sorted(times)[len(times) // 2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="1b")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--max-cache", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda", help="cpu: check the script off the GPU (no bandwidths)")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    llama_shapes._import_transformers()  # the zoo packages when transformers is not installed
    from transformers import AutoModelForCausalLM, GenerationConfig, StaticCache
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

    torch.manual_seed(llama_shapes.SEED)
    model = AutoModelForCausalLM.from_config(llama_shapes.config(a.shape), dtype=getattr(torch, a.dtype)).eval()
    model.generation_config = GenerationConfig(
        use_cache=True, cache_implementation="static", cache_config={"batch_size": 1, "max_cache_len": a.max_cache}
    )
    wrapped = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=a.max_cache)
    filled = make_model.fill(wrapped)
    # The filled parameters are the model's own (the wrapper holds the model), so the step calls the model
    # with a static cache of its own: the wrapper's forward differs between transformers releases (5.17's
    # left the cache's cache_position unset, a TypeError on the device), the model's call does not.
    model = model.to(a.device)
    cache = StaticCache(config=model.config, max_cache_len=a.max_cache)
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)
    step_s = []
    with torch.no_grad():
        for step in range(a.steps):
            ids = torch.tensor([[step]], dtype=torch.long, device=a.device)
            pos = torch.tensor([step], dtype=torch.long, device=a.device)
            sync()
            t = time.perf_counter()
            logits = model(input_ids=ids, cache_position=pos, past_key_values=cache, use_cache=True).logits
            sync()
            step_s.append(time.perf_counter() - t)
            (out / f"eager.step-{step}.bin").write_bytes(logits.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    mib = 1 << 20
    report = {"device": a.device, "torch": torch.__version__, "weight_bytes": filled, "step_s": step_s}
    if a.device == "cuda":
        report["device"] = torch.cuda.get_device_name(0)
        report["h2d_pinned_Bps"] = bandwidth(256 * mib, True, True)
        report["h2d_pageable_Bps"] = bandwidth(32 * mib, False, True)
        report["d2h_pageable_Bps"] = bandwidth(32 * mib, False, False)
    (out / "eager.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
