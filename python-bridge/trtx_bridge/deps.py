"""Import check: what is installed, which versions, what they can do.

Run before any model is touched, so a missing package is reported as one line
naming what to install rather than as a traceback from deep inside an export.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import platform
import sys
from typing import Any

from .errors import BridgeError, describe_exception

_LOG = logging.getLogger("trtx_bridge.deps")

# Import name -> what `pip install` takes. Anything else is named as imported.
PIP_NAMES = {
    "torch": "torch",
    "torch_tensorrt": "torch-tensorrt",
    "executorch": "executorch",
    "tensorrt": "tensorrt",
}
# The order the hint lists them in, so the message is stable.
_REQUIRED = ("torch", "torch_tensorrt", "executorch", "executorch.exir")
# The reference lowering needs no TensorRT. torch_tensorrt is not imported
# for it even when installed: importing torch_tensorrt.executorch registers
# Torch-TensorRT's own TensorRTBackend, which ExecuTorch would then find
# before the reference one.
_REQUIRED_REFERENCE = ("torch", "executorch", "executorch.exir")


def _version_of(module: Any, dist: str) -> str:
    for candidate in (module, getattr(module, "version", None)):
        value = getattr(candidate, "__version__", None)
        if isinstance(value, str) and value:
            return value
    try:
        from importlib import metadata

        return metadata.version(dist)
    except Exception:  # noqa: BLE001 - a version is informative, never required
        return "unknown"


def _missing_name(exc: ModuleNotFoundError, fallback: str) -> str:
    name = exc.name or fallback
    return name.split(".")[0]


def _install_hint(missing: list[str]) -> str:
    ordered = sorted(set(missing), key=lambda n: (list(PIP_NAMES).index(n) if n in PIP_NAMES else 99, n))
    packages = " ".join(PIP_NAMES.get(name, name.replace("_", "-")) for name in ordered)
    hint = (
        f"pip install {packages}  (into the environment of {sys.executable}), "
        "or point trtx at a Python that has them with --python PATH or TRTX_PYTHON"
    )
    if "torch_tensorrt" in ordered or "tensorrt" in ordered:
        hint += "; without TensorRT, `trtx export --engine reference` writes the same delegates with reference engines"
    return hint


def import_required(engine: str = "tensorrt") -> dict[str, Any]:
    """Import what ``engine`` needs (torch, torch_tensorrt, executorch; no
    torch_tensorrt for the reference lowering), or raise naming what is missing."""
    modules: dict[str, Any] = {}
    missing: list[str] = []
    broken: list[str] = []
    for name in _REQUIRED_REFERENCE if engine == "reference" else _REQUIRED:
        top = name.split(".")[0]
        if top in missing:
            continue
        try:
            modules[name] = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            missing.append(_missing_name(exc, top))
        except Exception as exc:  # noqa: BLE001 - any import failure is reported, not raised raw
            _LOG.debug("importing %s failed", name, exc_info=True)
            broken.append(f"{name} ({describe_exception(exc, 300)})")
    if missing:
        names = ", ".join(dict.fromkeys(missing))
        raise BridgeError(
            "IMPORT_MISSING",
            f"Python {platform.python_version()} at {sys.executable} cannot import {names}",
            _install_hint(missing),
            stage="check",
        )
    if broken:
        raise BridgeError(
            "IMPORT_FAILED",
            f"Python at {sys.executable} has the packages but importing failed: {'; '.join(broken)}",
            "The installed torch, torch-tensorrt, tensorrt and executorch versions probably do not "
            "match each other or the CUDA driver; reinstall them as one matching set.",
            stage="check",
        )
    if engine == "reference":
        return modules
    try:
        modules["torch_tensorrt.executorch"] = importlib.import_module("torch_tensorrt.executorch")
        export = modules["torch_tensorrt.executorch"].export
    except ModuleNotFoundError as exc:
        raise BridgeError(
            "IMPORT_MISSING",
            f"torch_tensorrt at {sys.executable} cannot import {_missing_name(exc, 'executorch')}",
            _install_hint([_missing_name(exc, "executorch")]),
            stage="check",
        ) from None
    except (ImportError, AttributeError) as exc:
        raise BridgeError(
            "TORCH_TENSORRT_TOO_OLD",
            f"torch_tensorrt {_version_of(modules['torch_tensorrt'], 'torch-tensorrt')} has no usable "
            f"ExecuTorch export ({describe_exception(exc, 300)})",
            'pip install --upgrade "torch-tensorrt[executorch]"',
            stage="check",
        ) from None
    modules["export"] = export
    return modules


def _parameters(func: Any) -> dict[str, Any]:
    try:
        return dict(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return {}


def _upstream_lineage() -> bool:
    try:
        from executorch.exir.passes import insert_write_back_for_buffers_pass as write_back

        return callable(getattr(write_back, "_inplace_lineage", None))
    except Exception:  # noqa: BLE001
        return False


def capabilities(modules: dict[str, Any]) -> dict[str, bool]:
    """What the installed Torch-TensorRT / ExecuTorch can do, read off their API.

    Read from signatures rather than versions: the zero-copy work (pytorch/TensorRT
    #4667) was open while this was written, and a version number would not say
    whether a given build carries it.
    """
    if "torch_tensorrt" not in modules:
        # The reference lowering: it bakes a budget as a compile spec; zero-copy
        # KV is finished by trtx itself on the written program.
        return {
            "zero_copy_kv": False,
            "check_zero_copy_kv": False,
            "weight_streaming_budget": True,
            "upstream_inplace_lineage": _upstream_lineage(),
        }
    ttx = modules["torch_tensorrt.executorch"]
    export_params = _parameters(modules["export"])
    return {
        "zero_copy_kv": "zero_copy_kv" in export_params and hasattr(ttx, "zero_copy_backend_config"),
        "check_zero_copy_kv": hasattr(ttx, "check_zero_copy_kv"),
        "weight_streaming_budget": "weight_streaming_budget_per_engine" in export_params,
        "upstream_inplace_lineage": _upstream_lineage(),
    }


def _installed_version(dist: str) -> str | None:
    try:
        from importlib import metadata

        return metadata.version(dist)
    except Exception:  # noqa: BLE001 - not installed
        return None


def versions(modules: dict[str, Any]) -> dict[str, str | None]:
    ttx = modules.get("torch_tensorrt")
    return {
        "python": platform.python_version(),
        "torch": _version_of(modules["torch"], "torch"),
        # Read from the package metadata when it was not imported (reference lowering).
        "torch_tensorrt": _version_of(ttx, "torch-tensorrt") if ttx is not None else _installed_version("torch-tensorrt"),
        "executorch": _version_of(modules["executorch"], "executorch"),
    }


def check(engine: str = "tensorrt") -> dict[str, Any]:
    """The ``check_only`` result payload."""
    modules = import_required(engine)
    return {
        "mode": "check",
        "python": {"executable": sys.executable, "version": platform.python_version()},
        "versions": versions(modules),
        "capabilities": capabilities(modules),
    }
