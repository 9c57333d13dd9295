"""Llama-3.2-1B's shape (hidden 2048, 16 layers, 32 heads over 8 KV heads, intermediate 8192, vocab 128256, tied): 1.24B parameters, 4.9 GB in float32.

    trtx export python-bridge/bench_models/llama32_1b.py:make_model -o model.pte --engine reference
    (make_model_bfloat16, make_model_float16; make_model takes TRTX_BENCH_DTYPE)

Random weights from the config, seeded; see llama_shapes.py.
"""

from __future__ import annotations

from typing import Any

# The factory file's folder is on sys.path (the bridge imports it as a script would be run).
from llama_shapes import dtype_from_env, export_decode_step

SHAPE = "1b"


def make_model() -> Any:
    return export_decode_step(SHAPE, dtype_from_env())


def make_model_float32() -> Any:
    return export_decode_step(SHAPE, "float32")


def make_model_bfloat16() -> Any:
    return export_decode_step(SHAPE, "bfloat16")


def make_model_float16() -> Any:
    return export_decode_step(SHAPE, "float16")
