"""TEST DOUBLE of torch_tensorrt for trtx's bridge tests. Not Torch-TensorRT. See ../README.md."""

from _trtx_double import missing_guard

missing_guard("torch_tensorrt")

import torch  # noqa: F401 - the real package needs torch, so a missing torch surfaces here too

__version__ = "2.14.0a0+trtx.double"

from . import dynamo  # noqa: F401
