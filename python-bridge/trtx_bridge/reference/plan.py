"""What one partition becomes: its blob bindings, its aliasing, and the
reference-engine steps that stand in for its computation.

Bindings follow Torch-TensorRT's backend (pytorch/TensorRT
py/torch_tensorrt/executorch/backend.py, ``preprocess``): inputs in
delegate-argument order named after the partition's runtime placeholders,
then outputs in output order; Torch-TensorRT names engine outputs
``output0``, ``output1``, ... . Weights (parameters and constant buffers
tagged into the partition) live inside the engine and are not bindings.

Aliasing follows Torch-TensorRT's KV-cache converter
(py/torch_tensorrt/dynamo/conversion/impl/index_copy.py and the validator
beside it): an ``aten.index_copy`` whose cache is a direct engine input, 4-D,
written along dim 2 with one position per step, batch 1, becomes a
KVCacheUpdate layer whose output is aliased to the cache input
(``kv_cache_update``). Every other buffer update -- a prefill writing several
positions, a ring-shifted convolution state -- is an ordinary engine output
that ExecuTorch copies back.

The computation maps onto the format's steps (schemas/reference-engine.md):
KvWrite through the cache input at the position input for each aliased
update, RingShift from the buffer's current value for each copy-back update,
Attend over the engine's caches for each other output (Affine from an input of
the same size when the engine has no cache). The numbers are not the model's;
what the engine reads, writes in place and returns is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch.export.graph_signature import InputKind

from .blob import Binding, BlobMetadata
from .engine import Affine, Attend, Engine, KvWrite, RingShift, ScratchNeed, Step

# node.meta keys the partitioner sets (ExecuTorch copies node meta into the
# partition's program, so preprocess sees them).
BUFFER_META = "trtx_reference_buffer"  # placeholder of a mutable buffer -> its fqn
MUTATES_META = "trtx_reference_mutates"  # node whose value a buffer takes -> the buffer's fqn

WEIGHT_STREAMING_BUDGET = "weight_streaming_budget"
TARGET_DEVICE = "target_device"

_FLOAT = (torch.float32, torch.float16, torch.bfloat16)
_INDEX = (torch.int64, torch.int32)
# Ops a position index passes through on its way from an input unchanged.
_PASS_THROUGH = ("aten::view_copy", "aten::clone", "aten::_to_copy", "aten::alias_copy", "dim_order_ops::_to_dim_order_copy")


class ReferenceLoweringError(ValueError):
    """A partition the reference engine format cannot stand in for."""


@dataclass
class EnginePlan:
    metadata: BlobMetadata
    engine: Engine


def _schema_name(target: object) -> str:
    schema = getattr(target, "_schema", None)
    return str(schema.name) if schema is not None else ""


def _val(node: torch.fx.Node) -> torch.Tensor | None:
    value = node.meta.get("val")
    return value if isinstance(value, torch.Tensor) else None


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def _device_id(compile_specs: Sequence[object]) -> int:
    for spec in compile_specs:
        if getattr(spec, "key", None) == TARGET_DEVICE:
            text = bytes(spec.value).decode("ascii", "replace").strip().lower()
            _, _, index = text.partition(":")
            return int(index) if index.isdigit() else 0
    return 0


def _position_input(node: object, inputs: dict[torch.fx.Node, int]) -> torch.fx.Node | None:
    """The engine input a write position comes from, through ops that do not change it."""
    seen = 0
    while isinstance(node, torch.fx.Node) and seen < 8:
        if node in inputs:
            return node
        if node.op != "call_function" or _schema_name(node.target) not in _PASS_THROUGH:
            return None
        node = node.args[0]
        seen += 1
    return None


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


def _kv_update(node: torch.fx.Node, inputs: dict[torch.fx.Node, int]) -> tuple[torch.fx.Node, torch.fx.Node] | None:
    """(cache input, position input) when ``node`` is a KVCacheUpdate in Torch-TensorRT's sense."""
    if not kv_update_shape(node) or node.args[0] not in inputs:
        return None
    cache, index = node.args[0], node.args[2]
    position = _position_input(index, inputs)
    if position is None:
        return None
    pos_val = _val(position)
    if pos_val is None or pos_val.dtype not in _INDEX or pos_val.numel() != 1:
        return None
    return cache, position


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


def plan_engine(edge_program: object, compile_specs: Sequence[object]) -> EnginePlan:
    gm = edge_program.graph_module
    sig = edge_program.graph_signature
    placeholders = {n.name: n for n in gm.graph.nodes if n.op == "placeholder"}
    runtime: list[torch.fx.Node] = []
    weights = 0
    for spec in sig.input_specs:
        node = placeholders[spec.arg.name]
        if spec.kind == InputKind.USER_INPUT:
            runtime.append(node)
        elif _val(node) is not None:
            weights += _nbytes(_val(node))
    inputs = {node: i for i, node in enumerate(runtime)}
    output_node = next(n for n in gm.graph.nodes if n.op == "output")
    outputs: list[torch.fx.Node] = list(output_node.args[0])
    if len(outputs) != len(sig.output_specs):
        raise ReferenceLoweringError("the partition's outputs and its signature disagree")
    if len(set(outputs)) != len(outputs) or any(o in inputs for o in outputs):
        raise ReferenceLoweringError("an engine output that repeats another or passes an input through has no reference step")

    n_in = len(runtime)
    bindings = [Binding(node.name, True) for node in runtime] + [Binding(f"output{i}", False) for i in range(len(outputs))]
    for i, node in enumerate(outputs):
        value = _val(node)
        if value is None or value.dtype not in _FLOAT:
            raise ReferenceLoweringError(
                f"engine output {i} ({node.name}) is {getattr(value, 'dtype', 'not a tensor')}; "
                "reference engines produce floating-point outputs only"
            )

    def is_float(node: torch.fx.Node) -> bool:
        value = _val(node)
        return value is not None and value.dtype in _FLOAT

    buffers = [n for n in runtime if n.meta.get(BUFFER_META)]
    activations = [n for n in runtime if is_float(n) and not n.meta.get(BUFFER_META)]
    float_inputs = [n for n in runtime if is_float(n)]
    if not float_inputs:
        raise ReferenceLoweringError("the engine has no floating-point input for a reference step to read")

    def source_for(exclude: torch.fx.Node) -> int:
        for node in activations + float_inputs:
            if node is not exclude:
                return inputs[node]
        return inputs[exclude]

    aliased: list[tuple[str, str, str]] = []
    writes: list[Step] = []
    states: list[Step] = []
    reads: list[Step] = []
    caches: list[int] = []
    for i, node in enumerate(outputs):
        out = n_in + i
        fqn = node.meta.get(MUTATES_META)
        kv = _kv_update(node, inputs) if fqn else None
        if kv is not None and kv[0].meta.get(BUFFER_META) == fqn:
            cache, position = kv
            aliased.append((f"output{i}", cache.name, "kv_cache_update"))
            # Distinct salts keep two caches fed the same source distinguishable.
            writes.append(KvWrite(inputs[cache], inputs[position], source_for(cache), 2, 0.5 + 0.125 * len(writes)))
            caches.append(inputs[cache])
            continue
        if fqn:
            state = next((n for n in buffers if n.meta.get(BUFFER_META) == fqn), None)
            if state is not None and _val(state).shape == _val(node).shape:
                states.append(RingShift(inputs[state], source_for(state), out))
                continue
        reads.append(out)  # resolved below, once every cache is known
    read_steps: list[Step] = []
    attend_over = caches or [inputs[n] for n in buffers if is_float(n)]
    for out in reads:
        value = _val(outputs[out - n_in])
        query = source_for(outputs[out - n_in])
        if attend_over:
            read_steps.append(Attend(list(attend_over), query, out))
            continue
        same = next((n for n in float_inputs if _val(n).numel() == value.numel()), None)
        if same is not None:
            read_steps.append(Affine(inputs[same], out, 1.0 + 0.25 * len(read_steps), 0.125))
        else:
            read_steps.append(Attend([inputs[n] for n in float_inputs], query, out))

    specs = {getattr(s, "key", None) for s in compile_specs}
    metadata = BlobMetadata(bindings=bindings, aliased_io=aliased, device_id=_device_id(compile_specs))
    engine = Engine(
        steps=writes + states + read_steps,
        scratch=_scratch(gm),
        streamable_weight_bytes=weights,
        weight_streaming=WEIGHT_STREAMING_BUDGET in specs,
    )
    return EnginePlan(metadata, engine)
