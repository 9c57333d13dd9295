"""What one partition becomes: its blob bindings, its aliasing, and the
version 3 reference engine around the partition's own program
(``subprogram.partition_program``; docs/reference-lowering.md §1).

Bindings follow Torch-TensorRT's backend (pytorch/TensorRT
py/torch_tensorrt/executorch/backend.py, ``preprocess``): inputs in
delegate-argument order named after the partition's runtime placeholders,
then outputs in output order; Torch-TensorRT names engine outputs
``output0``, ``output1``, ... . Weights (parameters and constant buffers
tagged into the partition) belong to the engine and are not bindings; a
version 3 engine keeps them in the outer program's named data.

Aliasing follows Torch-TensorRT's KV-cache converter
(py/torch_tensorrt/dynamo/conversion/impl/index_copy.py and the validator
beside it): an ``aten.index_copy`` whose cache is a direct engine input, 4-D,
written along dim 2 with one position per step, batch 1, becomes a
KVCacheUpdate layer whose output is aliased to the cache input
(``kv_cache_update``). Every other buffer update -- a prefill writing several
positions, a ring-shifted convolution state -- is an ordinary engine output
that ExecuTorch copies back.

The engine's numbers are the partition's: its program computes exactly what
the partition computes, in the bindings' dtypes, whatever they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch.export.graph_signature import InputKind

from ..compile_specs import WEIGHT_STREAMING_BUDGET, decode_compile_specs, spec_pairs
from .blob import Binding, BlobMetadata
from .engine import Engine, ScratchNeed

# node.meta keys the partitioner sets (ExecuTorch copies node meta into the
# partition's program, so preprocess sees them).
BUFFER_META = "trtx_reference_buffer"  # placeholder of a mutable buffer -> its fqn
MUTATES_META = "trtx_reference_mutates"  # node whose value a buffer takes -> the buffer's fqn

_INDEX = (torch.int64, torch.int32)


class StandinLoweringError(ValueError):
    """A partition the reference lowering cannot stand in for (an operator ExecuTorch has no kernel for)."""


@dataclass
class EnginePlan:
    metadata: BlobMetadata
    scratch: ScratchNeed
    weight_streaming: bool

    def engine(self, program: bytes, weight_bytes: int) -> Engine:
        """The engine around the partition's ``program`` whose external weights take ``weight_bytes``."""
        return Engine(program=program, scratch=self.scratch, streamable_weight_bytes=weight_bytes, weight_streaming=self.weight_streaming)


def _schema_name(target: object) -> str:
    schema = getattr(target, "_schema", None)
    return str(schema.name) if schema is not None else ""


def _val(node: torch.fx.Node) -> torch.Tensor | None:
    value = node.meta.get("val")
    return value if isinstance(value, torch.Tensor) else None


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def _device_id(compile_specs: Sequence[object]) -> int:
    # The blob's device is the one ExecuTorch places the delegate's tensors on:
    # target_device read as every trtx reader reads it (compile_specs.py). The
    # earlier reading here took "cuda:+1", "cuda: 1" and "cuda:1_0" as device
    # 0 and a non-ASCII digit as a number, where ExecuTorch reads 1, 1, 10 and
    # trtx refuses.
    decoded = decode_compile_specs(spec_pairs(compile_specs))
    refused = [f for f in decoded.errors if f.code == "SPEC_TARGET_DEVICE_INVALID"]
    if refused:
        raise StandinLoweringError(refused[0].message)
    return 0 if decoded.target is None or decoded.target.type == "cpu" else decoded.target.index


def kv_update_shape(node: torch.fx.Node) -> bool:
    """An ``index_copy`` Torch-TensorRT's validator admits to its KV-cache
    layer: into a placeholder, 4-D, along dim 2, one position, batch 1."""
    if node.op != "call_function" or _schema_name(node.target) != "aten::index_copy" or len(node.args) < 4:
        return False
    cache, dim, _, source = node.args[:4]
    if not isinstance(cache, torch.fx.Node) or cache.op != "placeholder" or dim != 2 or not isinstance(source, torch.fx.Node):
        return False
    cache_val, source_val = _val(cache), _val(source)
    if cache_val is None or source_val is None or cache_val.dim() != 4 or source_val.dim() != 4:
        return False
    return source_val.shape[2] == 1 and cache_val.shape[0] == 1


def _kv_cache_input(node: torch.fx.Node, inputs: dict[torch.fx.Node, int]) -> torch.fx.Node | None:
    """The cache input when ``node`` is a KVCacheUpdate in Torch-TensorRT's
    sense: the validator's shape, into a direct engine input
    (``emit_kv_cache_update_layer`` falls back to a scatter otherwise). The
    write index may be any tensor the engine computes -- transformers'
    StaticCache derives it from ``cumulative_length`` -- as the converter
    takes it as a runtime tensor (impl/index_copy.py, ``index_copy_kv``)."""
    if not kv_update_shape(node) or node.args[0] not in inputs:
        return None
    index = _val(node.args[2]) if isinstance(node.args[2], torch.fx.Node) else None
    if index is None or index.dtype not in _INDEX or index.numel() != 1:
        return None
    return node.args[0]


def _scratch(gm: torch.fx.GraphModule) -> ScratchNeed:
    # Activation memory the partition's intermediate values take: what an
    # engine's scratch holds, so a prefill needs more than a decode step.
    total = 0
    for node in gm.graph.nodes:
        if node.op == "call_function":
            value = node.meta.get("val")
            for t in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(t, torch.Tensor):
                    total += _nbytes(t)
    return ScratchNeed(base_bytes=total)


def user_input_names(edge_program: object) -> list[str]:
    """The partition's runtime inputs (its input bindings), in order."""
    return [s.arg.name for s in edge_program.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]


def plan_engine(edge_program: object, compile_specs: Sequence[object]) -> EnginePlan:
    """The blob metadata and the engine's sizes for a partition. Read before
    ``subprogram.partition_program`` changes the program (its index_copy
    rewrite would hide the KV-cache updates the aliasing is read from)."""
    gm = edge_program.graph_module
    sig = edge_program.graph_signature
    placeholders = {n.name: n for n in gm.graph.nodes if n.op == "placeholder"}
    runtime = [placeholders[spec.arg.name] for spec in sig.input_specs if spec.kind == InputKind.USER_INPUT]
    inputs = {node: i for i, node in enumerate(runtime)}
    output_node = next(n for n in gm.graph.nodes if n.op == "output")
    outputs: list[torch.fx.Node] = list(output_node.args[0])
    if len(outputs) != len(sig.output_specs):
        raise StandinLoweringError("the partition's outputs and its signature disagree")

    bindings = [Binding(node.name, True) for node in runtime] + [Binding(f"output{i}", False) for i in range(len(outputs))]
    aliased: list[tuple[str, str, str]] = []
    for i, node in enumerate(outputs):
        fqn = node.meta.get(MUTATES_META) if isinstance(node, torch.fx.Node) else None
        cache = _kv_cache_input(node, inputs) if fqn else None
        if cache is not None and cache.meta.get(BUFFER_META) == fqn:
            aliased.append((f"output{i}", cache.name, "kv_cache_update"))

    specs = {getattr(s, "key", None) for s in compile_specs}
    metadata = BlobMetadata(bindings=bindings, aliased_io=aliased, device_id=_device_id(compile_specs))
    return EnginePlan(metadata, scratch=_scratch(gm), weight_streaming=WEIGHT_STREAMING_BUDGET in specs)
