"""Where example inputs go before the Torch-TensorRT exporter traces them.

The bridge exports several methods by calling ``torch_tensorrt.dynamo.export``
itself and handing ``torch_tensorrt.executorch.export`` the mapping; for one
GraphModule, ``export`` does that step, and first places the example inputs on
the current CUDA device (pytorch/TensorRT py/torch_tensorrt/executorch/_export.py,
``_prepare_graph_module`` and ``_to_torch_inputs``). This module does the same
placement for the mapping path, so both paths trace on the same device.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def export_device() -> Any:
    """The device export() traces a GraphModule on: the current CUDA device.

    torch_tensorrt/executorch/_export.py (_prepare_graph_module) moves the
    example inputs to ``to_torch_device(default_device())``, i.e.
    ``cuda:<torch.cuda.current_device()>``, before torch_tensorrt.dynamo.export;
    the mapping form calls that exporter here, so it does the same.
    """
    import torch

    return torch.device("cuda", torch.cuda.current_device())


def on_device(value: Any, device: Any, modules: dict[str, Any]) -> Any:
    """The example inputs on ``device``, as _export.py's _to_torch_inputs moves them."""
    import torch

    input_type = getattr(modules["torch_tensorrt"], "Input", None)
    if input_type is not None and isinstance(value, input_type):
        from torch_tensorrt.dynamo.utils import get_torch_tensor

        return get_torch_tensor(value, device)
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, Mapping):
        return {key: on_device(item, device, modules) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(on_device(item, device, modules) for item in value)
    if isinstance(value, list):
        return [on_device(item, device, modules) for item in value]
    return value
