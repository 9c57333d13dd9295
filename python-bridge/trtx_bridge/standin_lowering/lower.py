"""The reference lowering end to end, as Torch-TensorRT's ExecuTorch export
runs it (pytorch/TensorRT py/torch_tensorrt/executorch/_export.py): one
partitioner per method into ``to_edge_transform_and_lower`` with
``EdgeCompileConfig(_check_ir_validity=False)``; then the caller finalizes
with ``to_executorch``.

``executorch_config`` is the ``ExecutorchBackendConfig`` trtx finalizes with:
ExecuTorch 1.5's defaults, with device-aware memory planning spelled out
(``enable_non_cpu_memory_planning``, default True in executorch/exir/capture/_config.py):
``PropagateDevicePass`` then stages every delegate input through
``et_copy::_h2d_copy`` and every output through ``_d2h_copy``, and memory
planning gives the device tensors their own CUDA arena. Initial buffer state
and buffers shared between methods are ExecuTorch's own switches
(``InitializedMutableBufferPass``, ``MemoryPlanningPass(share_mutable_buffers=True)``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .partitioner import BACKEND_ID, DEFAULT_MIN_BLOCK_SIZE, StandinPartitioner


class BackendConflict(RuntimeError):
    pass


def check_backend() -> None:
    """ExecuTorch picks the first BackendDetails subclass named TensorRTBackend: it must be ours."""
    from executorch.exir.backend.backend_details import BackendDetails

    from .backend import TensorRTBackend

    first = next((c for c in BackendDetails.__subclasses__() if c.__name__ == BACKEND_ID), None)
    if first is not TensorRTBackend:
        raise BackendConflict(
            f"another {BACKEND_ID} ({first.__module__}) is registered before the reference one; "
            "run the reference lowering in a process that has not imported torch_tensorrt.executorch"
        )


def lower(
    programs: Mapping[str, Any],
    *,
    weight_streaming_budget: int | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    target_device: str = "cuda:0",
    delegate: bool = True,
) -> Any:
    """``to_edge_transform_and_lower`` with a reference partitioner per method.

    ``options[name]`` may set ``torch_executed_ops`` and ``min_block_size``
    (Torch-TensorRT's compile options of the same names). ``delegate=False``
    lowers nothing: the same program on ExecuTorch's portable kernels.
    """
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower

    partitioners: dict[str, list] | None = None
    if delegate:
        check_backend()
        partitioners = {}
        for name in programs:
            opts = dict((options or {}).get(name, {}))
            partitioners[name] = [
                StandinPartitioner(
                    target_device=target_device,
                    weight_streaming_budget=weight_streaming_budget,
                    torch_executed_ops=tuple(opts.get("torch_executed_ops", ())),
                    min_block_size=int(opts.get("min_block_size", DEFAULT_MIN_BLOCK_SIZE)),
                )
            ]
    return to_edge_transform_and_lower(
        dict(programs),
        partitioner=partitioners,
        compile_config=EdgeCompileConfig(_check_ir_validity=False),
    )


def executorch_config(*, initialized_buffers: Sequence[str] = (), share_mutable_buffers: bool = False) -> Any:
    from executorch.exir import ExecutorchBackendConfig
    from executorch.exir.passes import MemoryPlanningPass
    from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass

    # Names on mutable buffers (fully_qualified_name) let trtx and its runner
    # say which cache is which; ExecuTorch omits them unless asked.
    kwargs: dict[str, Any] = {"enable_non_cpu_memory_planning": True, "emit_mutable_buffer_names": True}
    if initialized_buffers:
        kwargs["passes"] = [InitializedMutableBufferPass(list(initialized_buffers))]
    if share_mutable_buffers:
        kwargs["memory_planning_pass"] = MemoryPlanningPass(share_mutable_buffers=True)
        # ExecuTorch 1.5 shares mutable buffers only when every other tensor is
        # planned in the default arena (memory_planning_pass.py,
        # _check_default_mem_ids): device-aware planning must be off, so the
        # delegate's tensors are tagged CUDA but planned in host memory and no
        # staging copies are inserted.
        kwargs["enable_non_cpu_memory_planning"] = False
    return ExecutorchBackendConfig(**kwargs)
