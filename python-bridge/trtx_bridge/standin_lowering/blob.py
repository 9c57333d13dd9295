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
The bytes are written by ``trtx_bridge.tensorrt_blob`` (one writer for both);
this module adds the checks a lowering must pass first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..tensorrt_blob import HEADER_FORMAT, HEADER_SIZE, metadata_json
from ..tensorrt_blob import serialize_blob as _write_blob

MAGIC = b"TR01"
MAGIC_ALIASED_IO = b"TR02"
ALIAS_KINDS = ("kv_cache_update", "user")

__all__ = ["ALIAS_KINDS", "HEADER_FORMAT", "HEADER_SIZE", "MAGIC", "MAGIC_ALIASED_IO", "Binding", "BlobMetadata", "serialize_blob"]


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
        # Torch-TensorRT keeps aliased_io in a dict keyed by output (and so
        # does metadata_json), so an output aliased twice would silently lose
        # its first entry: refuse it instead.
        aliased_outputs = [out for out, _, _ in self.aliased_io]
        if len(set(aliased_outputs)) != len(aliased_outputs):
            raise ValueError(f"aliased_io names an output more than once: {aliased_outputs}")
        return metadata_json(
            [{"name": b.name, "is_input": b.is_input} for b in self.bindings],
            {out: (inp, kind) for out, inp, kind in self.aliased_io},
            hardware_compatible=self.hardware_compatible,
            device_id=self.device_id,
            serialized_metadata=self.serialized_metadata,
            target_platform=self.target_platform,
        )


def serialize_blob(engine: bytes, metadata: BlobMetadata) -> bytes:
    """The blob for ``engine``: the checked metadata, written by ``tensorrt_blob``."""
    return _write_blob(bytes(engine), metadata.to_json(), bool(metadata.aliased_io))
