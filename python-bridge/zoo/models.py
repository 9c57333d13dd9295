"""The zoo's models: builders that return a ``torch.export`` program each.

Decoders go through transformers' own ExecuTorch integration,
``transformers.integrations.executorch.TorchExportableModuleForDecoderOnlyLM``
(read in transformers 5.24.0, ``integrations/executorch.py``): it wraps the
model with a ``StaticCache`` (or a hybrid cache when the config has
``layer_types`` and a ``sliding_window``) whose layers become buffers
(``key_cache_i``, ``value_cache_i``, ``cumulative_length_i``), written in place
with ``index_copy_`` along dim 2 (``cache_utils.py``, ``StaticLayer.update``),
and ``export(input_ids=|inputs_embeds=, cache_position=)`` calls
``torch.export.export(..., strict=True)`` with those keyword inputs. The zoo
exports one decode step: one token, one position, as ExecuTorch's LLM runner
calls it. The encoder and the vision model are exported with
``torch.export.export`` directly, as transformers' export docs do.

Every model is built from a config object (``AutoConfig.for_model`` or the
model's config class) with ``from_config``: nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch

SEED = 0
MAX_CACHE = 32
# One decoder shape for every architecture: 2 layers, 4 query heads over 2
# key/value heads, head size 8.
TINY = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "vocab_size": 128,
    "max_position_embeddings": 64,
    "pad_token_id": 0,
    "bos_token_id": 1,
    "eos_token_id": 2,
}


@dataclass
class ZooModel:
    name: str
    description: str
    build: Callable[[], tuple[torch.nn.Module, torch.export.ExportedProgram]]
    methods: list[str] = field(default_factory=lambda: ["forward"])


def _static_generation_config(model: Any) -> None:
    """What ``TorchExportableModuleWithStaticCache.__init__`` checks: use_cache and cache_implementation 'static'."""
    from transformers import GenerationConfig

    model.generation_config = GenerationConfig(
        use_cache=True, cache_implementation="static", cache_config={"batch_size": 1, "max_cache_len": MAX_CACHE}
    )


def _config(model_type: str, **overrides: Any) -> Any:
    from transformers import AutoConfig

    return AutoConfig.for_model(model_type, **{**TINY, **overrides})


def _decoder(
    config: Any, *, embeds: bool = False, dtype: torch.dtype | None = None
) -> tuple[torch.nn.Module, torch.export.ExportedProgram]:
    from transformers import AutoModelForCausalLM
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

    torch.manual_seed(SEED)
    model = AutoModelForCausalLM.from_config(config).eval()
    if dtype is not None:
        # The float32 initialisation cast: the same weights as the float32 model, rounded.
        model = model.to(dtype)
    _static_generation_config(model)
    wrapped = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=MAX_CACHE)
    position = torch.tensor([0], dtype=torch.long)
    with torch.no_grad():
        if embeds:
            ep = wrapped.export(inputs_embeds=torch.zeros(1, 1, config.hidden_size), cache_position=position)
        else:
            ep = wrapped.export(input_ids=torch.tensor([[1]], dtype=torch.long), cache_position=position)
    return model, ep


def _decoder_of(model_type: str, **overrides: Any) -> Callable[[], tuple[torch.nn.Module, torch.export.ExportedProgram]]:
    return lambda: _decoder(_config(model_type, **overrides))


def _gpt2(dtype: torch.dtype | None = None) -> tuple[torch.nn.Module, torch.export.ExportedProgram]:
    # GPT-2's config names its sizes n_embd/n_layer/n_head/n_positions and has no grouped key/value heads.
    from transformers import GPT2Config

    config = GPT2Config(n_embd=32, n_layer=2, n_head=4, n_inner=64, vocab_size=128, n_positions=64, bos_token_id=1, eos_token_id=2)
    return _decoder(config, dtype=dtype)


def _qwen2_embeds() -> tuple[torch.nn.Module, torch.export.ExportedProgram]:
    # Sliding window off: Qwen2's config would otherwise give every layer a type and the hybrid cache.
    return _decoder(_config("qwen2", use_sliding_window=False, sliding_window=None), embeds=True)


# _TUPLE: an archive whose output spec names a transformers ModelOutput class
# (SequenceClassifierOutput, ImageClassifierOutputWithNoAttention) does not load
# where transformers is not installed: torch.export.load raises "Deserializing
# transformers.modeling_outputs.SequenceClassifierOutput in pytree is not
# registered". ``return_dict=False`` in the config makes the models return a
# tuple (``can_return_tuple`` in transformers' utils/generic.py reads it), so
# the archive loads in trtx's lean environment. The decoders' wrapper already
# returns the logits tensor.


def _bert(dtype: torch.dtype | None = None) -> tuple[torch.nn.Module, torch.export.ExportedProgram]:
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        vocab_size=128,
        max_position_embeddings=64,
        num_labels=3,
        return_dict=False,  # see _TUPLE
    )
    torch.manual_seed(SEED)
    model = BertForSequenceClassification(config).eval()
    if dtype is not None:
        model = model.to(dtype)
    ids = torch.arange(8, dtype=torch.long).reshape(1, 8)
    with torch.no_grad():
        ep = torch.export.export(model, args=(ids,), kwargs={"attention_mask": torch.ones_like(ids)})
    return model, ep


def _resnet() -> tuple[torch.nn.Module, torch.export.ExportedProgram]:
    # transformers' own ResNet: torchvision (and so timm) does not import beside this CPU torch.
    from transformers import ResNetConfig, ResNetForImageClassification

    config = ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic", num_labels=10, return_dict=False)
    torch.manual_seed(SEED)
    model = ResNetForImageClassification(config).eval()
    with torch.no_grad():
        ep = torch.export.export(model, args=(torch.zeros(1, 3, 32, 32),))
    return model, ep


def _qwen2_ci(dtype: str) -> Callable[[], tuple[torch.nn.Module, torch.export.ExportedProgram]]:
    # Qwen2.5's structure (biased q/k/v projections) at CI size, the float32
    # initialisation cast to `dtype`: the float32 entry holds the same weights,
    # so its eager outputs measure the half-precision program (issue 40).
    from bench_models import llama_shapes

    return lambda: llama_shapes.build_decode_step("qwen2-ci", dtype, max_cache=1024, cast_from_float32=True)


def _llama32_ci(dtype: str) -> Callable[[], tuple[torch.nn.Module, torch.export.ExportedProgram]]:
    # Llama-3.2-1B's structure (grouped KV heads, llama3 rope scaling, tied head,
    # a 32,000-token vocabulary) at a size CI holds, with the 1,024-position
    # static cache a real decode uses (python-bridge/bench_models/, issue 36).
    from bench_models import llama_shapes

    return lambda: llama_shapes.build_decode_step("ci", dtype, max_cache=1024)


ZOO: list[ZooModel] = [
    ZooModel("hf-llama", "LlamaForCausalLM, static cache, token ids", _decoder_of("llama")),
    ZooModel("hf-qwen3", "Qwen3ForCausalLM (q/k norms), static cache, token ids", _decoder_of("qwen3")),
    ZooModel("hf-mistral", "MistralForCausalLM without sliding window, static cache", _decoder_of("mistral", sliding_window=None)),
    ZooModel("hf-phi3", "Phi3ForCausalLM (fused qkv and gate/up), static cache", _decoder_of("phi3")),
    ZooModel("hf-olmo", "OlmoForCausalLM (non-parametric layer norm), static cache", _decoder_of("olmo")),
    ZooModel("hf-gemma3", "Gemma3ForCausalLM, sliding and full layers: the hybrid cache", _decoder_of("gemma3_text", sliding_window=16)),
    ZooModel("hf-gpt2", "GPT2LMHeadModel (learned positions), static cache", lambda: _gpt2()),
    ZooModel("hf-qwen2-embeds", "Qwen2ForCausalLM fed inputs_embeds instead of token ids", _qwen2_embeds),
    ZooModel("hf-bert", "BertForSequenceClassification (encoder), input_ids + attention_mask", lambda: _bert()),
    ZooModel(
        "llama32-ci",
        "LlamaForCausalLM in Llama-3.2-1B's structure at CI size, 1,024-position static cache, float32",
        _llama32_ci("float32"),
    ),
    ZooModel("llama32-ci-bf16", "the same in bfloat16 (torch_dtype), as Llama-3.2 is published", _llama32_ci("bfloat16")),
    ZooModel("llama32-ci-fp16", "the same in float16 (torch_dtype), as half-precision GPU deployments run it", _llama32_ci("float16")),
    ZooModel("hf-resnet", "ResNetForImageClassification (vision), pixel_values", _resnet),
    # Biased projections in half precision (issue 40): each with the float32 model of the same weights.
    ZooModel(
        "qwen2-ci", "Qwen2ForCausalLM in Qwen2.5's structure (biased q/k/v) at CI size, 1,024-position cache, float32", _qwen2_ci("float32")
    ),
    ZooModel("qwen2-ci-bf16", "the same weights cast to bfloat16", _qwen2_ci("bfloat16")),
    ZooModel("hf-gpt2-bf16", "GPT2LMHeadModel (biased everywhere, layer norms) cast to bfloat16", lambda: _gpt2(torch.bfloat16)),
    ZooModel("hf-bert-bf16", "BertForSequenceClassification (encoder, biased) cast to bfloat16", lambda: _bert(torch.bfloat16)),
]
