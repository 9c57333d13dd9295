"""Reference outputs: the exported model run eagerly, written beside the
program as ``OUT.reference.json`` (docs/reference-lowering.md §2, schema
schemas/reference-outputs.schema.json), so ``trtx verify`` can compare what
the program computes with what PyTorch computes.

Each method's ``torch.export`` program runs as ``ep.module()`` of a copy of
the program that shares its parameters (``_eager_module``: the export itself
is untouched, its buffers start as the program registers them, and the
weights are not copied), ``steps`` times, in the runner's order: for each step, each method in
program order -- ExecuTorch emits methods sorted by name
(executorch/exir/emit/_emit_program.py, ``emit_program``). Inputs follow the
runner's ``trtx-step-v1`` pattern (native-runner/src/cli/step_io.h), with the
dtypes and shapes of each method's user-input placeholders.
"""

from __future__ import annotations

import base64
import copy
import json
import os
from collections.abc import Mapping
from typing import Any

from .errors import BridgeError, describe_exception

SCHEMA = "trtx.reference/1"
INPUTS = "trtx-step-v1"
DEFAULT_STEPS = 5

# torch dtype -> the file's name (torch's own, without the prefix).
DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool")


class ReferenceRunError(RuntimeError):
    """The eager run could not be made (an input kind the pattern has no value for, a failing forward)."""


def _dtype_name(dtype: Any) -> str:
    name = str(dtype).removeprefix("torch.")
    if name not in DTYPES:
        raise ReferenceRunError(f"dtype {name} has no name in {SCHEMA}")
    return name


def _size(dim: Any, ep: Any) -> int:
    if isinstance(dim, int):
        return dim
    # A dynamic dimension: ExecuTorch plans (and the runner feeds) its upper
    # bound, so the eager run uses the same size.
    bound = ep.range_constraints.get(dim.node.expr) if hasattr(dim, "node") else None
    upper = getattr(bound, "upper", None)
    try:
        return int(upper)
    except (TypeError, ValueError, OverflowError):
        raise ReferenceRunError(f"dynamic dimension {dim} has no finite upper bound") from None


def step_input(value: Any, step: int, ep: Any) -> Any:
    """The ``trtx-step-v1`` value at ``step`` for a placeholder whose example value is ``value``."""
    import torch

    if isinstance(value, torch.Tensor):
        shape = [_size(d, ep) for d in value.shape]
        k = torch.arange(int(torch.Size(shape).numel()), dtype=torch.int64)
        if value.dtype.is_floating_point:
            flat = ((7 * step + 13 * k) % 29 - 14).to(torch.float64) / 16
        elif value.dtype == torch.bool:
            flat = (step + k) % 2
        else:
            flat = step + k  # wraps in narrow integer types, as the runner's store does
        return flat.to(value.dtype).reshape(shape)
    if isinstance(value, (int, torch.SymInt)) and not isinstance(value, bool):
        return step
    raise ReferenceRunError(f"a {type(value).__name__} input has no {INPUTS} value")


def encode_value(value: Any) -> dict[str, Any]:
    import torch

    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous()
        # Bytes through a uint8 view: numpy has no bfloat16, the view has every dtype.
        data = t.reshape(-1).view(torch.uint8).numpy().tobytes()
        return {"kind": "tensor", "dtype": _dtype_name(t.dtype), "shape": list(t.shape), "data": base64.b64encode(data).decode("ascii")}
    if value is None:
        return {"kind": "none"}
    if isinstance(value, bool):
        return {"kind": "bool", "value": value}
    if isinstance(value, int):
        return {"kind": "int", "value": value}
    if isinstance(value, float):
        return {"kind": "float", "value": value}
    raise ReferenceRunError(f"an output of type {type(value).__name__} has no form in {SCHEMA}")


def _user_inputs(ep: Any) -> list[Any]:
    from torch.export.graph_signature import InputKind

    placeholders = {n.name: n for n in ep.graph_module.graph.nodes if n.op == "placeholder"}
    values = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            node = placeholders.get(spec.arg.name)
            if node is None or "val" not in node.meta:
                raise ReferenceRunError(f"user input {spec.arg.name} carries no example value")
            values.append(node.meta["val"])
    return values


def _share_buffers(modules: Mapping[str, Any]) -> None:
    """One tensor per buffer name across methods, as ExecuTorch's
    ``MemoryPlanningPass(share_mutable_buffers=True)`` plans one buffer per
    name (executorch/exir/passes/memory_planning_pass.py). Buffers nobody
    mutates hold the same values either way, so every buffer is shared."""
    owners: dict[str, Any] = {}
    for module in modules.values():
        for fqn, tensor in list(module.named_buffers()):
            if fqn not in owners:
                owners[fqn] = tensor
                continue
            parent, _, leaf = fqn.rpartition(".")
            holder = module.get_submodule(parent) if parent else module
            holder._buffers[leaf] = owners[fqn]


def _eager_module(ep: Any) -> Any:
    """``ep``'s eager module, on a copy of ``ep`` that shares its parameters.

    A whole ``copy.deepcopy(ep)`` copied every weight (a model's weights held
    twice while it ran). The run changes buffers (caches) and never a
    parameter, so only the parameters are shared: buffers and constants are
    copied, and the export keeps the state it registered."""
    memo: dict[int, Any] = {}
    for fqn in ep.graph_signature.inputs_to_parameters.values():
        value = ep.state_dict.get(fqn)
        if value is not None:
            memo[id(value)] = value
    return copy.deepcopy(ep, memo).module()


def run_eager(programs: Mapping[str, Any], steps: int, *, share_mutable_buffers: bool = False) -> list[dict[str, Any]]:
    """``methods`` of the reference file: every method of ``programs`` run ``steps`` times."""
    order = sorted(programs)
    try:
        import torch
        from torch.utils import _pytree as pytree

        modules = {name: _eager_module(programs[name]) for name in order}
    except Exception as exc:
        raise ReferenceRunError(f"the exported program has no eager module: {type(exc).__name__}: {exc}") from exc
    if share_mutable_buffers:
        _share_buffers(modules)
    examples = {name: _user_inputs(programs[name]) for name in order}
    records: dict[str, list[dict[str, Any]]] = {name: [] for name in order}
    from .channel import report_detail

    with torch.no_grad():
        for step in range(steps):
            report_detail(f"step {step + 1} of {steps}")
            for name in order:
                ep = programs[name]
                flat = [step_input(v, step, ep) for v in examples[name]]
                args, kwargs = pytree.tree_unflatten(flat, ep.call_spec.in_spec)
                try:
                    result = modules[name](*args, **kwargs)
                except Exception as exc:
                    raise ReferenceRunError(f"method {name}, step {step}: {type(exc).__name__}: {exc}") from exc
                outputs, _ = pytree.tree_flatten(result)
                records[name].append({"inputs": [encode_value(v) for v in flat], "outputs": [encode_value(v) for v in outputs]})
    return [{"name": name, "steps": records[name]} for name in order]


def reference_document(
    programs: Mapping[str, Any], steps: int, *, model: str, program: str, share_mutable_buffers: bool = False
) -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    def producer(name: str) -> str | None:
        try:
            return version(name).split("+")[0]
        except PackageNotFoundError:
            return None

    return {
        "schema": SCHEMA,
        "producer": {"torch": producer("torch"), "executorch": producer("executorch")},
        "model": model,
        "program": program,
        "steps": steps,
        "inputs": INPUTS,
        "methods": run_eager(programs, steps, share_mutable_buffers=share_mutable_buffers),
    }


def record(programs: Mapping[str, Any], request: Any, channel: Any) -> str | None:
    """The bridge's ``reference`` stage: the document at ``request.reference.path``,
    or a ``REFERENCE_EAGER_FAILED`` warning and no file. The bridge finalizes
    without ``share_mutable_buffers``, so each method owns its buffers here too."""
    ref = request.reference
    if ref is None:
        return None
    try:
        document = reference_document(programs, ref.steps, model=os.path.basename(request.model), program=ref.program)
    except ReferenceRunError as exc:
        channel.warning(
            f"no reference outputs: the exported model does not run eagerly on {INPUTS} inputs ({exc}); "
            "the program is written, and trtx verify compares it with nothing from PyTorch",
            code="REFERENCE_EAGER_FAILED",
        )
        return None
    write_document(document, ref.path)
    return ref.path


def write_document(document: dict[str, Any], path: str) -> None:
    """Writes ``path``, or removes what it began. ``path`` is already the
    caller's temporary (trtx renames it beside the program and removes it on
    any failure), so no second temporary is made that a kill could strand.
    A file the system will not write (a full disk) is the bridge's ``WRITE``
    error, as the program's is (write.py), never ``INTERNAL``."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(document, f, separators=(",", ":"))
            f.write("\n")
    except BaseException as exc:
        if os.path.exists(path):
            os.remove(path)
        if isinstance(exc, OSError):
            raise BridgeError(
                "WRITE",
                f"writing {path} failed: {describe_exception(exc)}",
                "Check free space and that the folder is writable.",
                stage="reference",
            ) from exc
        raise
