"""The partition as a standalone ExecuTorch program: the payload of a
version 2 reference engine (docs/reference-lowering.md §1).

``TensorRTBackend.preprocess`` receives the partition as an Edge
``ExportedProgram`` (executorch/exir/backend/backend_api.py hands each tagged
partition to the backend as its own program): user inputs are the delegate's
arguments in order, parameters and constant buffers are its own placeholders.
Finalizing a copy of it with ``EdgeProgramManager.to_executorch`` gives a
``.pte`` whose ``forward`` takes the engine's input bindings and returns its
output bindings, with the partition's weights as constants.

Two things stand between that program and ExecuTorch's CPU kernels:

- an ``aten.index_copy`` the partitioner kept whole for the KV-cache alias
  (partitioner.ops_to_not_decompose): ExecuTorch 1.5 registers no
  ``aten::index_copy.out`` kernel (kernels/portable/functions.yaml has
  ``index_put.out``, not ``index_copy.out``), so it is written as the
  equivalent ``index_put`` -- same cache, ``[None] * dim + [index]``, same
  source -- whose output is the whole updated cache, as the engine's is;
- any other operator without a kernel: refused here, at export, naming it,
  rather than when the runner loads the method.
"""

from __future__ import annotations

import copy
from functools import lru_cache

import torch

from .plan import ReferenceLoweringError


@lru_cache(maxsize=1)
def available_kernels() -> frozenset[str]:
    """``aten::add.out``-style names of the kernels ExecuTorch's runtime registers in this process."""
    from executorch.extension.pybindings import portable_lib

    return frozenset(portable_lib._get_operator_names())


def _index_copy_as_index_put(gm: torch.fx.GraphModule) -> int:
    from executorch.exir.dialects._ops import ops as exir_ops

    index_put = exir_ops.edge.aten.index_put.default
    rewritten = 0
    for node in list(gm.graph.nodes):
        schema = getattr(node.target, "_schema", None)
        if node.op != "call_function" or schema is None or str(schema.name) != "aten::index_copy":
            continue
        cache, dim, index, source = node.args[:4]
        rank = node.meta["val"].dim() if "val" in node.meta else None
        if not isinstance(dim, int) or rank is None:
            raise ReferenceLoweringError(f"{node.name}: index_copy along a dimension not known at export ({dim!r})")
        dim %= rank
        with gm.graph.inserting_before(node):
            new = gm.graph.call_function(index_put, (cache, [None] * dim + [index], source))
        new.meta = dict(node.meta)
        node.replace_all_uses_with(new)
        gm.graph.erase_node(node)
        rewritten += 1
    if rewritten:
        gm.graph.lint()
        gm.recompile()
    return rewritten


def _operator_names(program: object) -> list[str]:
    names = []
    for plan in program.executorch_program.execution_plan:
        for op in plan.operators:
            names.append(f"{op.name}.{op.overload}" if op.overload else op.name)
    return names


def partition_program(edge_program: object, label: str) -> bytes:
    """The ``.pte`` bytes of ``edge_program`` on ExecuTorch's kernels; ``label`` names the partition in errors."""
    from executorch.exir import EdgeCompileConfig, EdgeProgramManager, ExecutorchBackendConfig

    # A copy: the delegate's own program stays as the partitioner made it
    # (ExecuTorch keeps it as the lowered module's original_module).
    program = copy.deepcopy(edge_program)
    _index_copy_as_index_put(program.graph_module)
    manager = EdgeProgramManager({"forward": program}, compile_config=EdgeCompileConfig(_check_ir_validity=False))
    try:
        finalized = manager.to_executorch(ExecutorchBackendConfig())
    except Exception as exc:
        raise ReferenceLoweringError(f"partition {label}: ExecuTorch cannot emit it as a program: {exc}") from exc
    kernels = available_kernels()
    missing = sorted({name for name in _operator_names(finalized) if name not in kernels})
    if missing:
        raise ReferenceLoweringError(f"partition {label} uses operator(s) ExecuTorch's CPU kernels do not implement: {', '.join(missing)}")
    return bytes(finalized.buffer)
