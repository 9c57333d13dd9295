"""``TensorRTBackend`` for the reference lowering: the ExecuTorch backend that
Torch-TensorRT registers under this id (pytorch/TensorRT
py/torch_tensorrt/executorch/backend.py), with a version 2 trtx reference
engine -- the partition itself as an ExecuTorch program -- where the real one
serializes a TensorRT plan. ExecuTorch finds a backend by its class name
(executorch/exir/backend/backend_api.py, ``to_backend``), so the class must
carry exactly this name; ``lower.check_backend`` makes sure no other class of
the same name (Torch-TensorRT's, when imported) would be found first.
"""

from __future__ import annotations

from typing import final

from executorch.exir.backend.backend_details import BackendDetails, CompileSpec, PreprocessResult

from .blob import serialize_blob
from .engine import encode_engine
from .plan import plan_engine, user_input_names
from .subprogram import partition_program


@final
class TensorRTBackend(BackendDetails):
    @staticmethod
    def preprocess(edge_program, compile_specs: list[CompileSpec]) -> PreprocessResult:
        label = f"taking ({', '.join(user_input_names(edge_program))})"
        plan = plan_engine(edge_program, compile_specs, partition_program(edge_program, label))
        return PreprocessResult(processed_bytes=serialize_blob(encode_engine(plan.engine), plan.metadata))
