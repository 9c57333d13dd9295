"""The TensorRT delegate blob, written the way Torch-TensorRT's ExecuTorch
serializer writes it (pytorch/TensorRT py/torch_tensorrt/executorch/serialization.py,
``serialize_engine``), so a reference-lowered program carries the same blob a
real export does; only the engine bytes inside differ.

Layout (little-endian): ``<4sIIIQ8s`` header of 32 bytes -- magic, metadata
offset, metadata size, engine offset (16-aligned), engine size, reserved
(first byte 0x01) -- then the metadata JSON, zero padding, the engine.

The metadata is ``json.dumps(..., separators=(",", ":"))`` with Python's default
``ensure_ascii``, keys in the order ``io_bindings, aliased_io,
hardware_compatible, device_id, serialized_metadata, target_platform``: the C++
parser searches for the later keys only after ``io_bindings``. Bindings carry
names only (``dtype`` "", ``shape`` []), as the real backend's ``preprocess``
writes them. ``TR02`` marks a blob whose metadata carries ``aliased_io`` (a
parser that predates aliasing only checks the magic, and must refuse it).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field

MAGIC = b"TR01"
MAGIC_ALIASED_IO = b"TR02"
HEADER_FORMAT = "<4sIIIQ8s"
HEADER_SIZE = struct.calcsize(HEADER_FORMAT)
ALIAS_KINDS = ("kv_cache_update", "user")


@dataclass
class Binding:
    name: str
    is_input: bool


@dataclass
class BlobMetadata:
    bindings: list[Binding] = field(default_factory=list)
    # (output binding, input binding, kind), in the order the engine recorded them.
    aliased_io: list[tuple[str, str, str]] = field(default_factory=list)
    hardware_compatible: bool = False
    device_id: int = 0
    serialized_metadata: str = ""
    target_platform: str = ""

    def to_json(self) -> bytes:
        names = [b.name for b in self.bindings]
        if len(set(names)) != len(names) or any(not n or "\0" in n for n in names):
            raise ValueError(f"binding names must be unique, non-empty and NUL-free: {names}")
        outputs = {b.name for b in self.bindings if not b.is_input}
        inputs = {b.name for b in self.bindings if b.is_input}
        for out, inp, kind in self.aliased_io:
            if out not in outputs or inp not in inputs or kind not in ALIAS_KINDS:
                raise ValueError(f"aliased_io entry {(out, inp, kind)} names no output/input binding or an unknown kind")
        data = {
            "io_bindings": [{"name": b.name, "dtype": "", "shape": [], "is_input": b.is_input} for b in self.bindings],
            "aliased_io": [{"output": out, "input": inp, "kind": kind} for out, inp, kind in self.aliased_io],
            "hardware_compatible": self.hardware_compatible,
            "device_id": self.device_id,
            "serialized_metadata": self.serialized_metadata,
            "target_platform": self.target_platform,
        }
        return json.dumps(data, separators=(",", ":")).encode("utf-8")


def _align16(offset: int) -> int:
    return (offset + 15) & ~15


def serialize_blob(engine: bytes, metadata: BlobMetadata) -> bytes:
    meta = metadata.to_json()
    engine_offset = _align16(HEADER_SIZE + len(meta))
    header = struct.pack(
        HEADER_FORMAT,
        MAGIC_ALIASED_IO if metadata.aliased_io else MAGIC,
        HEADER_SIZE,
        len(meta),
        engine_offset,
        len(engine),
        b"\x01" + b"\x00" * 7,
    )
    return header + meta + b"\x00" * (engine_offset - HEADER_SIZE - len(meta)) + bytes(engine)
