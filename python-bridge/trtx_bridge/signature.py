"""Describe an ExportedProgram's graph signature as plain JSON.

Duck-typed on purpose: it reads real ``torch.export`` signatures, and the test
doubles' stand-ins, through the same attributes (``input_specs``,
``output_specs``, each with ``kind``, ``arg`` and ``target``).
"""

from __future__ import annotations

from typing import Any


def kind_name(kind: Any) -> str:
    return str(getattr(kind, "name", kind))


def _arg_name(arg: Any) -> str | None:
    name = getattr(arg, "name", None)
    return name if isinstance(name, str) else None


def _spec(spec: Any) -> dict[str, Any]:
    target = getattr(spec, "target", None)
    return {
        "kind": kind_name(getattr(spec, "kind", None)),
        "name": _arg_name(getattr(spec, "arg", None)),
        "target": target if isinstance(target, str) else None,
    }


def describe_signature(signature: Any) -> dict[str, Any]:
    inputs = [_spec(s) for s in signature.input_specs]
    outputs = [_spec(s) for s in signature.output_specs]
    return {
        "inputs": inputs,
        "outputs": outputs,
        "user_inputs": [s["name"] for s in inputs if s["kind"] == "USER_INPUT" and s["name"] is not None],
        "user_outputs": [s["name"] for s in outputs if s["kind"] == "USER_OUTPUT" and s["name"] is not None],
        # Output value name -> buffer FQN, the shape torch's own
        # ExportGraphSignature.buffers_to_mutate property has.
        "buffers_to_mutate": {
            s["name"]: s["target"] for s in outputs if s["kind"] == "BUFFER_MUTATION" and s["name"] is not None and s["target"] is not None
        },
        "inputs_to_buffers": {
            s["name"]: s["target"] for s in inputs if s["kind"] == "BUFFER" and s["name"] is not None and s["target"] is not None
        },
    }


def mutation_targets(signature: Any) -> list[str]:
    return [
        s.target
        for s in signature.output_specs
        if kind_name(s.kind) in ("BUFFER_MUTATION", "USER_INPUT_MUTATION") and isinstance(s.target, str)
    ]
