"""The trtx reference engine, version 3, written from Python.

The format is the project's (schemas/reference_engine.fbs; the contract is
docs/reference-lowering.md §1): a FlatBuffer with file identifier ``TRXE``.
Version 3, the only one the reference lowering writes, carries the
partition's own computation as an ExecuTorch program (``program``, the
``.pte`` bytes) whose weights are EXTERNAL tensors, resolved by name from the
outer program's named data, and no steps; the runner executes that program
where a real delegate runs a TensorRT plan. Version 2 (the same with the
weights inside ``program``) is no longer written: a FlatBuffer vector cannot
pass 2 GiB, so a real-size model's engine could not be written at all.
Version 1's synthetic steps are written by the TypeScript fixtures only
(src/tensorrt/standin-engine.ts), never here.

Written with the ``flatbuffers`` runtime that the locked environment already
carries (ExecuTorch depends on it), by hand rather than from generated code,
so the bridge needs no code generator. Every field is written, defaults
included (``ForceDefaults``), as the TypeScript writer does, so the bytes mean
the same to every reader.
"""

from __future__ import annotations

from dataclasses import dataclass

import flatbuffers

IDENTIFIER = b"TRXE"
VERSION = 3


@dataclass
class ScratchNeed:
    base_bytes: int
    per_unit_bytes: int = 0
    unit_binding: int = 0
    unit_dim: int = 0


@dataclass
class Engine:
    # The partition as an ExecuTorch program: inputs the engine's input
    # bindings in order, outputs its output bindings in order; its weights
    # are EXTERNAL, in the outer program's named data.
    program: bytes
    scratch: ScratchNeed | None = None
    streamable_weight_bytes: int = 0
    weight_streaming: bool = False


def _u32(value: int, what: str) -> int:
    if not isinstance(value, int) or not 0 <= value < 1 << 32:
        raise ValueError(f"{what}: {value!r} is not a u32")
    return value


def _u64(value: int, what: str) -> int:
    if not isinstance(value, int) or not 0 <= value < 1 << 64:
        raise ValueError(f"{what}: {value!r} is not a u64")
    return value


def encode_engine(engine: Engine) -> bytes:
    if not engine.program:
        raise ValueError(f"a version {VERSION} reference engine needs its program")
    b = flatbuffers.Builder(len(engine.program) + 256)
    b.ForceDefaults(True)
    # Vectors and sub-tables before the table that refers to them. Schema
    # slots: version 0, steps 1, scratch 2, streamable_weight_bytes 3,
    # weight_streaming 4, program 5.
    program = b.CreateByteVector(bytes(engine.program))
    b.StartVector(4, 0, 4)
    steps = b.EndVector()
    scratch = 0
    if engine.scratch is not None:
        sc = engine.scratch
        b.StartObject(4)
        b.PrependUint64Slot(0, _u64(sc.base_bytes, "scratch.base_bytes"), 0)
        b.PrependUint64Slot(1, _u64(sc.per_unit_bytes, "scratch.per_unit_bytes"), 0)
        b.PrependUint32Slot(2, _u32(sc.unit_binding, "scratch.unit_binding"), 0)
        b.PrependUint32Slot(3, _u32(sc.unit_dim, "scratch.unit_dim"), 0)
        scratch = b.EndObject()
    b.StartObject(6)
    b.PrependUint32Slot(0, VERSION, 1)
    b.PrependUOffsetTRelativeSlot(1, steps, 0)
    if scratch:
        b.PrependUOffsetTRelativeSlot(2, scratch, 0)
    b.PrependUint64Slot(3, _u64(engine.streamable_weight_bytes, "streamable_weight_bytes"), 0)
    b.PrependBoolSlot(4, bool(engine.weight_streaming), False)
    b.PrependUOffsetTRelativeSlot(5, program, 0)
    root = b.EndObject()
    b.Finish(root, file_identifier=IDENTIFIER)
    return bytes(b.Output())
