"""``TensorRTBackend`` for the reference lowering: the ExecuTorch backend that
Torch-TensorRT registers under this id (pytorch/TensorRT
py/torch_tensorrt/executorch/backend.py), with a version 3 trtx reference
engine -- the partition itself as an ExecuTorch program, its weights in the
outer program's named data -- where the real one serializes a TensorRT plan.
ExecuTorch finds a backend by its class name
(executorch/exir/backend/backend_api.py, ``to_backend``), so the class must
carry exactly this name; ``lower.check_backend`` makes sure no other class of
the same name (Torch-TensorRT's, when imported) would be found first.

Weights (docs/reference-lowering.md §1, version 3): each EXTERNAL constant of
the partition's program goes into a ``NamedDataStore`` under its
fully_qualified_name and comes back as ``PreprocessResult.data_store_output``,
as XNNPACK's backend hands its weights over
(executorch/backends/xnnpack/operators/node_visitor.py). ExecuTorch merges
every delegate's store into the outer program's (``EdgeProgramManager.__init__``,
``collect_named_data_store_from_exported_program`` in
executorch/exir/program/_program.py); ``NamedDataStore.add_named_data``
keeps one entry for a key added twice with equal bytes (two methods, or a
tied embedding in two partitions) and refuses a key whose bytes differ
(executorch/exir/_serialize/_named_data_store.py). The outer ``.pte`` writes
each entry as its own segment (u64 offsets, no 2 GiB FlatBuffer ceiling).
"""

from __future__ import annotations

import copy
from typing import final

import torch
from executorch.exir.backend.backend_details import BackendDetails, CompileSpec, PreprocessResult

from .blob import serialize_blob
from .engine import encode_engine
from .plan import plan_engine, user_input_names
from .subprogram import partition_program

# Alignment of each weight in the named data: ExecuTorch's constant tensor
# alignment (executorch/exir/tensor.py, ``ALIGNMENT``). The outer program
# aligns every segment to 128 bytes anyway (``segment_alignment``).
WEIGHT_ALIGNMENT = 16


@final
class TensorRTBackend(BackendDetails):
    @classmethod
    def copy_exported_program_for_preprocess(cls, edge_program, compile_specs: list[CompileSpec]):
        """The program ``preprocess`` may change, sharing the weights.

        ExecuTorch's default deep-copies the whole partition, weights included
        (executorch/exir/backend/backend_details.py), so a model's weights
        existed twice while it lowered. ``preprocess`` changes the graph and
        the signature (the index_copy rewrite, ``to_executorch``'s passes),
        never a weight's values: the copy shares every tensor of the
        ``state_dict`` and ``constants`` with the original.
        """
        memo: dict[int, object] = {}
        for value in (*edge_program.state_dict.values(), *edge_program.constants.values()):
            if isinstance(value, torch.Tensor):
                memo[id(value)] = value
        return copy.deepcopy(edge_program, memo)

    @staticmethod
    def preprocess(edge_program, compile_specs: list[CompileSpec]) -> PreprocessResult:
        from executorch.exir._serialize._named_data_store import NamedDataStore

        from ..channel import report_detail

        inputs = user_input_names(edge_program)
        label = f"taking ({', '.join(inputs)})"
        ops = sum(1 for n in edge_program.graph_module.graph.nodes if n.op == "call_function")
        report_detail(f"emitting a partition of {ops} ops and {len(inputs)} inputs as its engine's program")
        plan = plan_engine(edge_program, compile_specs)
        sub = partition_program(edge_program, label)
        store = NamedDataStore()
        for key, data in sub.weights.items():
            store.add_named_data(key, data, alignment=WEIGHT_ALIGNMENT)
        engine = plan.engine(sub.program, sum(len(data) for data in sub.weights.values()))
        return PreprocessResult(
            processed_bytes=serialize_blob(encode_engine(engine), plan.metadata),
            data_store_output=store.get_named_data_store_output(),
        )
