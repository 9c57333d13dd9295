"""The reference partitioner: the partitions Torch-TensorRT would make, for a
machine without TensorRT.

Torch-TensorRT compiles the graph first (``torch_tensorrt.dynamo.compile``:
every op with a converter joins a TensorRT subgraph unless the caller lists it
in ``torch_executed_ops``; a subgraph smaller than ``min_block_size`` ops stays
in PyTorch), then its ExecuTorch partitioner (pytorch/TensorRT
py/torch_tensorrt/executorch/partitioner.py) makes each engine its own
``TensorRTBackend`` delegate with a ``target_device`` compile spec, after
``tag_constant_data`` and with every mutated buffer kept above the delegate
(``_keep_mutated_buffers_above_delegate``): the engine is stateless, the
caller owns the cache. This partitioner makes the same cut in one step on the
Edge program: supported ops are every call except the ``torch_executed_ops``.

It also records, in node meta, which placeholders are mutable buffers and
which values buffers take, for ``plan.plan_engine`` (the real backend reads
the same facts from the compiled engine).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Callable

import torch
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from executorch.exir.backend.utils import tag_constant_data
from torch.export import ExportedProgram
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from ..compile_specs import TARGET_DEVICE, WEIGHT_STREAMING_BUDGET
from .plan import BUFFER_META, MUTATES_META, kv_update_shape

BACKEND_ID = "TensorRTBackend"
# torch_tensorrt.dynamo.compile's default.
DEFAULT_MIN_BLOCK_SIZE = 5
KEPT_WHOLE = "aten.index_copy.default"


def op_name(target: object) -> str:
    """``aten.mul.Tensor`` for an ATen or Edge overload; '' for anything else."""
    schema = getattr(target, "_schema", None)
    if schema is None:
        return ""
    name = str(schema.name).replace("::", ".")
    return f"{name}.{schema.overload_name or 'default'}"


def _normalize_op(op: object) -> str:
    text = op_name(op) or str(op)
    return text.removeprefix("torch.ops.").replace("::", ".")


class _Supported(OperatorSupportBase):
    def __init__(self, excluded: Iterable[str]):
        super().__init__()
        self.excluded = set(excluded)

    def is_node_supported(self, submodules: dict[str, torch.nn.Module], node: torch.fx.Node) -> bool:
        if node.op != "call_function":
            return False
        if node.target is operator.getitem:
            return True
        name = op_name(node.target)
        return bool(name) and name not in self.excluded


class StandinPartitioner(Partitioner):
    def __init__(
        self,
        *,
        target_device: str = "cuda:0",
        weight_streaming_budget: int | None = None,
        torch_executed_ops: Sequence[object] = (),
        min_block_size: int = DEFAULT_MIN_BLOCK_SIZE,
    ) -> None:
        super().__init__()
        # Compile specs in Torch-TensorRT's order: the budget export() appends
        # to the caller's specs, then the target_device the partitioner adds.
        specs: list[CompileSpec] = []
        if weight_streaming_budget is not None:
            if isinstance(weight_streaming_budget, bool) or not 0 <= int(weight_streaming_budget) < 1 << 63:
                raise ValueError(f"weight_streaming_budget {weight_streaming_budget!r} is not a byte count in [0, 2**63)")
            specs.append(CompileSpec(WEIGHT_STREAMING_BUDGET, str(int(weight_streaming_budget)).encode("ascii")))
        specs.append(CompileSpec(TARGET_DEVICE, target_device.encode("ascii")))
        self.delegation_spec = DelegationSpec(BACKEND_ID, specs)
        self.excluded = {_normalize_op(op) for op in torch_executed_ops}
        if min_block_size < 1:
            raise ValueError("min_block_size must be at least 1")
        self.min_block_size = min_block_size

    def partition(self, exported_program: ExportedProgram) -> PartitionResult:
        gm = exported_program.graph_module
        proposer = CapabilityBasedPartitioner(gm, _Supported(self.excluded), allows_single_node_partition=True)
        tags: dict[str, DelegationSpec] = {}
        for partition in proposer.propose_partitions():
            ops = [n for n in partition.nodes if n.target is not operator.getitem]
            kept_whole = any(op_name(n.target) == KEPT_WHOLE for n in ops)
            # A small block stays with ExecuTorch's portable kernels, as
            # Torch-TensorRT leaves it to PyTorch -- except one holding an op
            # kept whole for the KV-cache converter, which ExecuTorch has no
            # kernel for undecomposed (to_edge_transform_and_lower refuses it).
            if len(ops) < self.min_block_size and not kept_whole:
                continue
            tag = f"tensorrt_{partition.id}"
            for node in partition.nodes:
                node.meta["delegation_tag"] = tag
            tags[tag] = self.delegation_spec
        tag_constant_data(exported_program)

        sig = exported_program.graph_signature
        mutated = set(sig.buffers_to_mutate.values())
        by_name = {n.name: n for n in gm.graph.nodes}
        for node in gm.graph.nodes:
            fqn = sig.inputs_to_buffers.get(node.name) if node.op == "placeholder" else None
            if fqn in mutated:
                # The engine is stateless across executions: a buffer it
                # updates stays a caller-owned input (Torch-TensorRT's
                # _keep_mutated_buffers_above_delegate).
                node.meta.pop("delegation_tag", None)
                node.meta[BUFFER_META] = fqn
        for output_name, fqn in sig.buffers_to_mutate.items():
            node = by_name.get(output_name)
            if node is not None:
                node.meta[MUTATES_META] = fqn
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)

    def ops_to_not_decompose(self, ep: ExportedProgram) -> tuple[list[torch._ops.OpOverload], Callable[[torch.fx.Node], bool] | None]:
        # An index_copy Torch-TensorRT would lower to its KV-cache layer is
        # kept whole, so the backend sees the update it aliases; every other
        # one decomposes (Torch-TensorRT's fallback converter is a scatter,
        # whose result is an ordinary output).
        def keep(node: torch.fx.Node) -> bool:
            return KEPT_WHOLE not in self.excluded and kv_update_shape(node)

        return ([torch.ops.aten.index_copy.default], keep)
