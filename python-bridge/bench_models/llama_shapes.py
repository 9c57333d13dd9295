"""Llama-3.2-shaped decoders with random weights, as ``trtx export`` factories
(the factory contract: python-bridge/README.md): each factory returns the
``torch.export`` program of one decode step -- one token, one position --
through transformers' own ExecuTorch wrapper,
``transformers.integrations.executorch.TorchExportableModuleForDecoderOnlyLM``
with a static cache (as python-bridge/zoo/models.py exports its decoders).

Nothing is downloaded: the model is made from a config (``AutoConfig.for_model``)
with ``from_config``, after ``torch.manual_seed(SEED)``, so every run makes the
same weights. Each factory (``make_1b``...) takes its dtype from
``TRTX_BENCH_DTYPE`` (float32, bfloat16, float16); the static
cache holds ``TRTX_BENCH_MAX_CACHE`` positions (default 1024).

transformers is not in trtx's managed environment: it is imported from the
folder ``npm run zoo`` installs it in (``$TRTX_CACHE_DIR/zoo/packages-*-ENV``,
ENV the managed environment's hash), from ``TRTX_BENCH_PYTHONPATH`` when set,
or from wherever the Python that runs the bridge has it.
"""

from __future__ import annotations

import glob
import os
import sys
from typing import Any

SEED = 0
DEFAULT_MAX_CACHE = 1024
DTYPES = ("float32", "bfloat16", "float16")

# meta-llama/Llama-3.2-1B and -3B's config.json (architecture fields only).
LLAMA_3_2 = {
    "vocab_size": 128256,
    "rope_theta": 500000.0,
    "rope_scaling": {
        "rope_type": "llama3",
        "factor": 32.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
    "max_position_embeddings": 131072,
    "rms_norm_eps": 1e-5,
    "hidden_act": "silu",
    "tie_word_embeddings": True,
    "attention_bias": False,
    "mlp_bias": False,
    "bos_token_id": 128000,
    "eos_token_id": 128001,
}
# Qwen2.5's structure (transformers' Qwen2ForCausalLM): biased q/k/v
# projections, a tied head, rope theta 1e6. The biases are what ExecuTorch's
# bfloat16 addmm rounds differently from eager (issue 40).
QWEN_2_5 = {
    "model_type": "qwen2",
    "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-6,
    "hidden_act": "silu",
    "tie_word_embeddings": True,
    "use_sliding_window": False,
    "sliding_window": None,
    "max_position_embeddings": 32768,
    "bos_token_id": 1,
    "eos_token_id": 2,
}
# The sizes CI holds: a 32,000-token vocabulary, two layers, grouped key/value heads.
CI_SIZE = {
    "vocab_size": 32000,
    "hidden_size": 256,
    "num_hidden_layers": 2,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "intermediate_size": 1024,
}
SHAPES: dict[str, dict[str, Any]] = {
    "1b": {
        **LLAMA_3_2,
        "hidden_size": 2048,
        "num_hidden_layers": 16,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "intermediate_size": 8192,
    },
    "3b": {
        **LLAMA_3_2,
        "hidden_size": 3072,
        "num_hidden_layers": 28,
        "num_attention_heads": 24,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "intermediate_size": 8192,
    },
    # ~300M parameters, the same structure: what this machine can export for memory measurements.
    "300m": {
        **LLAMA_3_2,
        "vocab_size": 32000,
        "hidden_size": 1024,
        "num_hidden_layers": 18,
        "num_attention_heads": 16,
        "num_key_value_heads": 4,
        "head_dim": 64,
        "intermediate_size": 4096,
        "bos_token_id": 1,
        "eos_token_id": 2,
    },
    # CI size: the same structure (grouped KV heads, llama3 rope, tied head), ~10M parameters.
    # Qwen2.5-0.5B's shape (its published config.json's sizes).
    "qwen25-05b": {
        **QWEN_2_5,
        "vocab_size": 151936,
        "hidden_size": 896,
        "num_hidden_layers": 24,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "intermediate_size": 4864,
    },
    # Qwen2.5's structure at the size CI holds (the zoo's qwen2-ci models).
    "qwen2-ci": {**QWEN_2_5, **CI_SIZE},
    "ci": {**LLAMA_3_2, **CI_SIZE, "bos_token_id": 1, "eos_token_id": 2},
}


def _import_transformers() -> None:
    try:
        import transformers

        return
    except ImportError:
        pass
    extra = os.environ.get("TRTX_BENCH_PYTHONPATH")
    if extra:
        candidates = [p for p in extra.split(os.pathsep) if p]
    else:
        root = os.environ.get("TRTX_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "trtx")
        env = os.path.basename(sys.prefix).removeprefix("env-")
        candidates = sorted(glob.glob(os.path.join(root, "zoo", f"packages-*-{env}")))
    for folder in candidates:
        if folder not in sys.path:
            sys.path.append(folder)
    import transformers  # noqa: F401  # ImportError here says transformers is nowhere to be found


def dtype_from_env() -> str:
    name = os.environ.get("TRTX_BENCH_DTYPE", "float32")
    if name not in DTYPES:
        raise ValueError(f"TRTX_BENCH_DTYPE={name!r}: one of {', '.join(DTYPES)}")
    return name


def max_cache_from_env() -> int:
    text = os.environ.get("TRTX_BENCH_MAX_CACHE", str(DEFAULT_MAX_CACHE))
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"TRTX_BENCH_MAX_CACHE={text!r}: a positive number of positions")
    return int(text)


def config(shape: str) -> Any:
    _import_transformers()
    from transformers import AutoConfig

    params = dict(SHAPES[shape])
    return AutoConfig.for_model(params.pop("model_type", "llama"), **params)


def parameter_count(shape: str) -> int:
    """Parameters of ``shape`` (the tied head counted once), computed from the config."""
    s = SHAPES[shape]
    h, kv = s["hidden_size"], s["num_key_value_heads"] * s["head_dim"]
    q = s["num_attention_heads"] * s["head_dim"]
    layer = h * q + 2 * h * kv + q * h + 3 * h * s["intermediate_size"] + 2 * h
    if s.get("model_type") == "qwen2":
        layer += q + 2 * kv  # the q/k/v biases
    return s["vocab_size"] * h + s["num_hidden_layers"] * layer + h


def build_decode_step(
    shape: str, dtype: str, max_cache: int | None = None, prepare: Any = None, *, cast_from_float32: bool = False
) -> tuple[Any, Any]:
    """The model of ``shape`` in ``dtype`` and the ``torch.export`` program of one decode step of it.

    ``prepare(wrapped)``, when given, sees the wrapped module before it is
    exported (bench/real-size/make_model.py sets its weights there).
    ``cast_from_float32``: the float32 model's weights (transformers'
    initialisation in float32) cast to ``dtype``, so the ``dtype`` model and
    the float32 one of the same shape hold the same weights up to rounding:
    eager float32 is then the yardstick of both (issue 40).
    """
    import torch

    _import_transformers()
    from transformers import AutoModelForCausalLM, GenerationConfig
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r}: one of {', '.join(DTYPES)}")
    max_cache = max_cache or max_cache_from_env()
    torch.manual_seed(SEED)
    if cast_from_float32:
        model = AutoModelForCausalLM.from_config(config(shape), dtype=torch.float32).eval().to(getattr(torch, dtype))
    else:
        model = AutoModelForCausalLM.from_config(config(shape), dtype=getattr(torch, dtype)).eval()
    # What TorchExportableModuleWithStaticCache checks: use_cache and cache_implementation "static".
    model.generation_config = GenerationConfig(
        use_cache=True, cache_implementation="static", cache_config={"batch_size": 1, "max_cache_len": max_cache}
    )
    wrapped = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=max_cache)
    if prepare is not None:
        prepare(wrapped)
    with torch.no_grad():
        ep = wrapped.export(input_ids=torch.tensor([[1]], dtype=torch.long), cache_position=torch.tensor([0], dtype=torch.long))
    return model, ep


def export_decode_step(shape: str, dtype: str, max_cache: int | None = None, prepare: Any = None) -> Any:
    """The ``torch.export`` program of one decode step of ``shape`` in ``dtype`` (build_decode_step)."""
    return build_decode_step(shape, dtype, max_cache, prepare)[1]


# The factories (`trtx export python-bridge/bench_models/llama_shapes.py:make_1b`), one per shape, the
# dtype from TRTX_BENCH_DTYPE (float32 by default), the cache from TRTX_BENCH_MAX_CACHE.
def make_1b() -> Any:
    return export_decode_step("1b", dtype_from_env())


def make_3b() -> Any:
    return export_decode_step("3b", dtype_from_env())


def make_300m() -> Any:
    return export_decode_step("300m", dtype_from_env())


def make_ci() -> Any:
    return export_decode_step("ci", dtype_from_env())


def make_qwen25_05b() -> Any:
    return export_decode_step("qwen25-05b", dtype_from_env())
