"""The reference lowering: Torch-TensorRT's ExecuTorch delegate shape (backend
id ``TensorRTBackend``, the exact ``TR01``/``TR02`` blob, ``target_device``)
with a trtx reference engine inside instead of a TensorRT plan, for machines
without TensorRT. Needs torch and executorch only.
"""

from .lower import executorch_config, lower  # noqa: F401
