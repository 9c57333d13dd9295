"""Turn the request's ``model`` into one program source per method.

Sources:
  * an ExportedProgram archive written by ``torch.export.save`` (.pt2, .pt, .ep;
    recognised by content, not by extension), loaded with ``torch.export.load``;
  * ``file.py:factory`` -- a zero-argument callable in a Python file; see
    ``FACTORY_CONTRACT`` below and python-bridge/README.md;
  * a ``torch.save`` pickle, only with ``allow_pickle`` (it runs code on load),
    holding the same kinds of value a factory returns.

A TorchScript archive is refused with directions to produce an ExportedProgram.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from .errors import BridgeError, describe_exception
from .sniff import parse_model_ref, sniff_model_file

_LOG = logging.getLogger("trtx_bridge.sources")

FACTORY_CONTRACT = (
    "a factory takes no arguments and returns one of: "
    "{'module': nn.Module, 'example_inputs': tuple, 'example_kwarg_inputs'?: dict, "
    "'dynamic_shapes'?: ..., 'compile_options'?: dict}; "
    "a tuple (module, example_inputs[, dynamic_shapes]); "
    "a torch.export.ExportedProgram; "
    "or {'methods': {name: any of those}} for several methods"
)
_FACTORY_HINT = "See the factory contract in python-bridge/README.md: " + FACTORY_CONTRACT + "."

# Arguments the bridge sets itself; a factory's compile_options may not.
RESERVED_COMPILE_OPTIONS = ("exported_program", "inputs", "arg_inputs", "kwarg_inputs", "enable_weight_streaming")


@dataclass
class MethodSource:
    """What one method is exported from: a program, or a module to trace."""

    name: str
    exported_program: Any = None
    module: Any = None
    example_inputs: tuple[Any, ...] = ()
    example_kwarg_inputs: dict[str, Any] = field(default_factory=dict)
    dynamic_shapes: Any = None
    compile_options: dict[str, Any] = field(default_factory=dict)
    origin: str = ""


def load_sources(model: str, methods: list[str] | None, allow_pickle: bool) -> list[MethodSource]:
    ref = parse_model_ref(model)
    if not os.path.exists(ref.path):
        raise BridgeError(
            "MODEL_NOT_FOUND",
            f"{ref.path} does not exist",
            "Check the path; a factory is named as file.py:function.",
            stage="load",
        )
    if os.path.isdir(ref.path):
        raise BridgeError(
            "MODEL_FORMAT",
            f"{ref.path} is a directory",
            "Name a torch.export.save archive (.pt2) or a factory as file.py:function.",
            stage="load",
        )
    if ref.factory is not None:
        value = _call_factory(ref.path, ref.factory)
        return _select(_normalize(value, f"{os.path.basename(ref.path)}:{ref.factory}"), methods)
    if ref.path.endswith(".py"):
        raise BridgeError(
            "FACTORY",
            f"{ref.path} is a Python file but names no factory",
            f"Name the function too: {ref.path}:make_model. {_FACTORY_HINT}",
            stage="load",
        )
    return _load_file(ref.path, methods, allow_pickle)


def _load_file(path: str, methods: list[str] | None, allow_pickle: bool) -> list[MethodSource]:
    sniffed = sniff_model_file(path)
    name = os.path.basename(path)
    if sniffed.kind == "exported_program":
        import torch

        try:
            program = torch.export.load(path)
        except Exception as exc:
            _LOG.error("torch.export.load failed", exc_info=exc)
            raise BridgeError(
                "MODEL_LOAD",
                f"torch.export.load could not read {name}: {describe_exception(exc)}",
                "An archive must be loaded by a torch at least as new as the one that saved it; "
                "re-save it with this environment's torch, or use --python for the one that wrote it.",
                stage="load",
            ) from exc
        return _select(_normalize(program, name), methods)
    if sniffed.kind == "torchscript":
        raise BridgeError(
            "TORCHSCRIPT",
            f"{name} is a TorchScript archive (torch.jit.save); TorchScript cannot be exported to ExecuTorch",
            "Export the eager model instead: ep = torch.export.export(model, example_inputs); "
            "torch.export.save(ep, 'model.pt2'), then run trtx export model.pt2 "
            "(or point trtx at a factory: file.py:function returning the module and example inputs).",
            stage="load",
        )
    if sniffed.kind == "pickle":
        if not allow_pickle:
            raise BridgeError(
                "PICKLE_REFUSED",
                f"{name} is a pickled torch.save file ({sniffed.detail}); loading it runs arbitrary code",
                "Re-save the model as an ExportedProgram (torch.export.save(torch.export.export(model, inputs), "
                "'model.pt2')), or pass --allow-pickle if you trust this file.",
                stage="load",
            )
        import torch

        _LOG.warning("unpickling %s because allow_pickle was given", path)
        try:
            value = torch.load(path, weights_only=False)
        except Exception as exc:
            _LOG.error("torch.load failed", exc_info=exc)
            raise BridgeError(
                "MODEL_LOAD",
                f"torch.load could not read {name}: {describe_exception(exc)}",
                "The classes the pickle names must be importable in this Python; a factory "
                "(file.py:function) that builds the model is the sturdier route.",
                stage="load",
            ) from exc
        return _select(_normalize(value, name), methods)
    if sniffed.kind == "aoti_package":
        raise BridgeError(
            "MODEL_FORMAT",
            f"{name} is a PT2 archive without an ExportedProgram (an AOTInductor package?)",
            "Save the ExportedProgram itself with torch.export.save(ep, 'model.pt2').",
            stage="load",
        )
    raise BridgeError(
        "MODEL_FORMAT",
        f"{name} is not a model file trtx reads ({sniffed.detail})",
        "Give a torch.export.save archive (.pt2/.pt/.ep) or a factory as file.py:function.",
        stage="load",
    )


def _call_factory(path: str, attr: str) -> Any:
    # A per-path module name, so two factories in files of the same name do not
    # collide in sys.modules.
    digest = hashlib.sha1(path.encode("utf-8")).hexdigest()[:12]
    module_name = f"_trtx_factory_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise BridgeError("FACTORY", f"cannot import {path}", _FACTORY_HINT, stage="load")
    module = importlib.util.module_from_spec(spec)
    # Like running the file as a script: its siblings are importable.
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BridgeError:
        raise
    except BaseException as exc:
        _LOG.error("importing the factory file failed", exc_info=exc)
        raise BridgeError(
            "FACTORY",
            f"importing {os.path.basename(path)} failed: {describe_exception(exc)}",
            "Fix the error in the factory file.",
            stage="load",
        ) from exc
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise BridgeError(
                "FACTORY",
                f"{os.path.basename(path)} has no {attr}",
                f"Define def {attr.split('.')[-1]}(): ... in {os.path.basename(path)}. {_FACTORY_HINT}",
                stage="load",
            )
        target = getattr(target, part)
    if not callable(target):
        raise BridgeError("FACTORY", f"{attr} in {os.path.basename(path)} is not callable", _FACTORY_HINT, stage="load")
    try:
        return target()
    except BaseException as exc:
        _LOG.error("the factory raised", exc_info=exc)
        raise BridgeError(
            "FACTORY",
            f"{attr}() raised {describe_exception(exc)}",
            "Fix the error in the factory.",
            stage="load",
        ) from exc


def _normalize(value: Any, origin: str) -> dict[str, MethodSource]:
    """Read a factory's (or an unpickled file's) value into sources by method."""
    if isinstance(value, dict) and "methods" in value:
        extra = sorted(set(value) - {"methods"})
        if extra:
            raise BridgeError(
                "FACTORY",
                f"{origin}: a value with 'methods' may hold nothing else (found {', '.join(extra)})",
                _FACTORY_HINT,
                stage="load",
            )
        methods = value["methods"]
        if not isinstance(methods, dict) or not methods:
            raise BridgeError("FACTORY", f"{origin}: 'methods' must be a non-empty dict", _FACTORY_HINT, stage="load")
        out: dict[str, MethodSource] = {}
        for name, item in methods.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise BridgeError("FACTORY", f"{origin}: method name {name!r} is not an identifier", _FACTORY_HINT, stage="load")
            out[name] = _one_method(item, name, f"{origin}[{name}]")
        return out
    return {"forward": _one_method(value, "forward", origin)}


def _one_method(value: Any, name: str, origin: str) -> MethodSource:
    import torch

    if isinstance(value, torch.export.ExportedProgram):
        return MethodSource(name=name, exported_program=value, origin=origin)
    if isinstance(value, torch.nn.Module):
        raise BridgeError(
            "MODEL_NO_INPUTS",
            f"{origin} is a bare nn.Module; tracing it needs example inputs",
            "Return {'module': model, 'example_inputs': (x,)} (a factory, or the object you torch.save), "
            "or save an ExportedProgram with torch.export.save.",
            stage="load",
        )
    if isinstance(value, tuple) and 2 <= len(value) <= 3:
        value = {
            "module": value[0],
            "example_inputs": value[1],
            "dynamic_shapes": value[2] if len(value) == 3 else None,
        }
    if not isinstance(value, dict):
        raise BridgeError("FACTORY", f"{origin} gave a {type(value).__name__}, which trtx cannot export", _FACTORY_HINT, stage="load")
    allowed = {"module", "example_inputs", "example_kwarg_inputs", "dynamic_shapes", "compile_options"}
    extra = sorted(set(value) - allowed)
    if extra:
        raise BridgeError("FACTORY", f"{origin}: unknown key(s) {', '.join(extra)}", _FACTORY_HINT, stage="load")
    module = value.get("module")
    if isinstance(module, torch.export.ExportedProgram):
        source = MethodSource(name=name, exported_program=module, origin=origin)
    elif isinstance(module, torch.nn.Module):
        inputs = value.get("example_inputs")
        if isinstance(inputs, list):
            inputs = tuple(inputs)
        if not isinstance(inputs, tuple):
            raise BridgeError(
                "FACTORY",
                f"{origin}: example_inputs must be a tuple of positional inputs",
                _FACTORY_HINT,
                stage="load",
            )
        kwargs = value.get("example_kwarg_inputs") or {}
        if not isinstance(kwargs, dict):
            raise BridgeError("FACTORY", f"{origin}: example_kwarg_inputs must be a dict", _FACTORY_HINT, stage="load")
        source = MethodSource(
            name=name,
            module=module,
            example_inputs=inputs,
            example_kwarg_inputs=dict(kwargs),
            dynamic_shapes=value.get("dynamic_shapes"),
            origin=origin,
        )
    else:
        raise BridgeError(
            "FACTORY",
            f"{origin}: 'module' must be an nn.Module or an ExportedProgram, not {type(module).__name__}",
            _FACTORY_HINT,
            stage="load",
        )
    options = value.get("compile_options") or {}
    if not isinstance(options, dict):
        raise BridgeError("FACTORY", f"{origin}: compile_options must be a dict", _FACTORY_HINT, stage="load")
    clash = sorted(set(options) & set(RESERVED_COMPILE_OPTIONS))
    if clash:
        raise BridgeError(
            "FACTORY",
            f"{origin}: compile_options may not set {', '.join(clash)}; trtx sets them",
            "Drop them: inputs come from example_inputs, and --budget turns on weight streaming.",
            stage="load",
        )
    source.compile_options = dict(options)
    return source


def _select(found: dict[str, MethodSource], methods: list[str] | None) -> list[MethodSource]:
    """Apply the request's method names.

    With one program, a single requested name renames it (an archive holds one
    method, exported as ``forward`` unless --method says otherwise). With
    several, the names pick a subset, in the order asked.
    """
    if methods is None:
        return list(found.values())
    if list(found) == ["forward"]:
        if len(methods) != 1:
            raise BridgeError(
                "METHOD",
                f"the model holds one method but {len(methods)} were asked for ({', '.join(methods)})",
                "Give one --method to name it, or a factory returning {'methods': {...}} for several.",
                stage="load",
            )
        source = found["forward"]
        source.name = methods[0]
        return [source]
    unknown = [name for name in methods if name not in found]
    if unknown:
        raise BridgeError(
            "METHOD",
            f"no method {', '.join(unknown)} in the model (it has {', '.join(found)})",
            "Pick --method from the names the factory returns.",
            stage="load",
        )
    return [found[name] for name in methods]


def example_inputs_of(program: Any, origin: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Example inputs for an already-exported program (an archive, say).

    torch.export.save stores the inputs it traced with; compile needs them.
    """
    stored = getattr(program, "example_inputs", None)
    if stored is not None:
        args, kwargs = stored
        return tuple(args), dict(kwargs or {})
    raise BridgeError(
        "MODEL_NO_INPUTS",
        f"{origin} carries no example inputs, which Torch-TensorRT needs to compile it",
        "Re-save it with a torch that stores example inputs in the archive (2.5 or later), "
        "or use a factory (file.py:function) that returns the module and its example inputs.",
        stage="load",
    )
