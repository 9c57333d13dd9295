"""The trtx reference engine, written from Python.

The format is the project's (schemas/reference_engine.fbs, documented in
schemas/reference-engine.md): a FlatBuffer with file identifier ``TRXE``
describing a small deterministic computation over the blob's io bindings, which
trtx's runner executes where a real program would run a TensorRT plan. The
TypeScript side (src/tensorrt/reference-engine.ts) and the native runner read
it; this module writes it with the ``flatbuffers`` runtime that the locked
environment already carries (ExecuTorch depends on it), by hand rather than
from generated code, so the bridge needs no code generator.

Every field is written, defaults included (``ForceDefaults``), as the
TypeScript writer does, so the bytes mean the same to every reader.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

import flatbuffers

IDENTIFIER = b"TRXE"
VERSION = 1

# union Op { Affine, KvWrite, Attend, RingShift } -- NONE is 0.
_OP_TYPE = {"Affine": 1, "KvWrite": 2, "Attend": 3, "RingShift": 4}


@dataclass
class Affine:
    input: int
    output: int
    scale: float = 1.0
    bias: float = 0.0


@dataclass
class KvWrite:
    cache: int
    position: int
    source: int
    seq_dim: int
    salt: float = 0.5


@dataclass
class Attend:
    caches: list[int]
    query: int
    output: int


@dataclass
class RingShift:
    state_in: int
    source: int
    state_out: int


Step = Union[Affine, KvWrite, Attend, RingShift]


@dataclass
class ScratchNeed:
    base_bytes: int
    per_unit_bytes: int = 0
    unit_binding: int = 0
    unit_dim: int = 0


@dataclass
class Engine:
    steps: list[Step] = field(default_factory=list)
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


def _step_body(b: flatbuffers.Builder, step: Step, at: str) -> int:
    # Fields in schema slot order; each table is built after any vector it refers to.
    if isinstance(step, Affine):
        b.StartObject(4)
        b.PrependUint32Slot(0, _u32(step.input, f"{at}.input"), 0)
        b.PrependUint32Slot(1, _u32(step.output, f"{at}.output"), 0)
        b.PrependFloat32Slot(2, float(step.scale), 1.0)
        b.PrependFloat32Slot(3, float(step.bias), 0.0)
        return b.EndObject()
    if isinstance(step, KvWrite):
        b.StartObject(5)
        b.PrependUint32Slot(0, _u32(step.cache, f"{at}.cache"), 0)
        b.PrependUint32Slot(1, _u32(step.position, f"{at}.position"), 0)
        b.PrependUint32Slot(2, _u32(step.source, f"{at}.source"), 0)
        b.PrependUint32Slot(3, _u32(step.seq_dim, f"{at}.seq_dim"), 0)
        b.PrependFloat32Slot(4, float(step.salt), 0.5)
        return b.EndObject()
    if isinstance(step, Attend):
        b.StartVector(4, len(step.caches), 4)
        for k, cache in reversed(list(enumerate(step.caches))):
            b.PrependUint32(_u32(cache, f"{at}.caches[{k}]"))
        caches = b.EndVector()
        b.StartObject(3)
        b.PrependUOffsetTRelativeSlot(0, caches, 0)
        b.PrependUint32Slot(1, _u32(step.query, f"{at}.query"), 0)
        b.PrependUint32Slot(2, _u32(step.output, f"{at}.output"), 0)
        return b.EndObject()
    if isinstance(step, RingShift):
        b.StartObject(3)
        b.PrependUint32Slot(0, _u32(step.state_in, f"{at}.state_in"), 0)
        b.PrependUint32Slot(1, _u32(step.source, f"{at}.source"), 0)
        b.PrependUint32Slot(2, _u32(step.state_out, f"{at}.state_out"), 0)
        return b.EndObject()
    raise ValueError(f"{at}: unknown step {step!r}")


def encode_engine(engine: Engine) -> bytes:
    b = flatbuffers.Builder(256)
    b.ForceDefaults(True)
    step_offsets = []
    for i, step in enumerate(engine.steps):
        body = _step_body(b, step, f"steps[{i}]")
        b.StartObject(2)
        b.PrependUint8Slot(0, _OP_TYPE[type(step).__name__], 0)
        b.PrependUOffsetTRelativeSlot(1, body, 0)
        step_offsets.append(b.EndObject())
    b.StartVector(4, len(step_offsets), 4)
    for offset in reversed(step_offsets):
        b.PrependUOffsetTRelative(offset)
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
    b.StartObject(5)
    b.PrependUint32Slot(0, VERSION, 1)
    b.PrependUOffsetTRelativeSlot(1, steps, 0)
    if scratch:
        b.PrependUOffsetTRelativeSlot(2, scratch, 0)
    b.PrependUint64Slot(3, _u64(engine.streamable_weight_bytes, "streamable_weight_bytes"), 0)
    b.PrependBoolSlot(4, bool(engine.weight_streaming), False)
    root = b.EndObject()
    b.Finish(root, file_identifier=IDENTIFIER)
    return bytes(b.Output())
