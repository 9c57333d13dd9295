"""The partition as a standalone ExecuTorch program: the payload of a
version 3 reference engine (docs/reference-lowering.md §1), its weights kept
outside it.

``TensorRTBackend.preprocess`` receives the partition as an Edge
``ExportedProgram`` (executorch/exir/backend/backend_api.py hands each tagged
partition to the backend as its own program, already copied by
``copy_exported_program_for_preprocess``): user inputs are the delegate's
arguments in order, parameters and constant buffers are its own placeholders.
Finalizing it with ``EdgeProgramManager.to_executorch`` gives a ``.pte`` whose
``forward`` takes the engine's input bindings and returns its output bindings.

The weights do not go into that ``.pte``: it is emitted with
``ExecutorchBackendConfig(external_constants=True)``, so every parameter and
constant buffer is a tensor with ``extra_tensor_info.location = EXTERNAL`` and
``fully_qualified_name`` = its FQN, and the emitter hands their bytes back in
``external_constant_map`` / ``external_constant_buffer``
(executorch/exir/emit/_emitter.py, ``_save_new_const_tensor``). The caller puts
them into the outer program's named data. Lifted tensor constants (literals
the trace made, ``_lifted_tensor`` placeholders) stay inside the program, as
ExecuTorch's ``external_constants_pass`` leaves them
(executorch/exir/passes/external_constants_pass.py): their FQNs are
per-program names, not the model's, and they are a few bytes.

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

from dataclasses import dataclass, field
from functools import lru_cache

import torch

from .plan import StandinLoweringError


@dataclass
class PartitionProgram:
    # The ``.pte`` bytes: the graph and its lifted literals, no weights.
    program: bytes
    # Every EXTERNAL constant of ``program``: its fully_qualified_name -> its
    # bytes (contiguous, the tensor's own layout). Keys sharing a buffer in
    # the emitter share the same bytes object here.
    weights: dict[str, bytes] = field(default_factory=dict)


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
            raise StandinLoweringError(f"{node.name}: index_copy along a dimension not known at export ({dim!r})")
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


def external_weights(finalized: object) -> dict[str, bytes]:
    """The EXTERNAL constants an ``ExecutorchProgramManager`` emitted, by FQN.

    Read from the emitter's output (``ExecutorchProgramManager._emitter_output``,
    executorch/exir/program/_program.py; fields ``external_constant_map``
    ``{tag: {fqn: index}}`` and ``external_constant_buffer``,
    executorch/exir/emit/_emit_program.py ``EmitterOutput``): the same bytes
    ``serialize_for_executorch`` would write into a ``.ptd``, without a copy.
    """
    emitted = finalized._emitter_output
    weights: dict[str, bytes] = {}
    for fqns in emitted.external_constant_map.values():
        for fqn, index in fqns.items():
            weights[fqn] = emitted.external_constant_buffer[index]
    return weights


def partition_program(edge_program: object, label: str) -> PartitionProgram:
    """``edge_program`` as a program on ExecuTorch's kernels with its weights
    outside; ``label`` names the partition in errors.

    ``edge_program`` is changed in place (the index_copy rewrite, and
    ``to_executorch``'s passes): it must be the copy ExecuTorch made for
    ``preprocess`` (``TensorRTBackend.copy_exported_program_for_preprocess``),
    never the lowered module's ``original_module``.
    """
    from executorch.exir import EdgeCompileConfig, EdgeProgramManager, ExecutorchBackendConfig

    _index_copy_as_index_put(edge_program.graph_module)
    manager = EdgeProgramManager({"forward": edge_program}, compile_config=EdgeCompileConfig(_check_ir_validity=False))
    try:
        finalized = manager.to_executorch(ExecutorchBackendConfig(external_constants=True))
    except Exception as exc:
        raise StandinLoweringError(f"partition {label}: ExecuTorch cannot emit it as a program: {exc}") from exc
    kernels = available_kernels()
    missing = sorted({name for name in _operator_names(finalized) if name not in kernels})
    if missing:
        raise StandinLoweringError(f"partition {label} uses operator(s) ExecuTorch's CPU kernels do not implement: {', '.join(missing)}")
    # The program without its weights is the graph's size: joining the Cord
    # copies kilobytes, not the model.
    return PartitionProgram(program=bytes(finalized.buffer), weights=external_weights(finalized))
