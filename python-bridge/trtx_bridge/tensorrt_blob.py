"""TensorRT delegate blobs laid out exactly as Torch-TensorRT's serializer writes them.

Written for trtx from the documented layout of
``py/torch_tensorrt/executorch/serialization.py`` in pytorch/TensorRT
(``TensorRTBlobMetadata.to_json`` and ``serialize_engine``); it needs no torch
and no Torch-TensorRT. The facts it follows:

- the header is ``struct`` format ``<4sIIIQ8s``: magic, metadata offset (the
  32-byte header size), metadata size, engine offset, engine size, reserved
  bytes ``01 00 00 00 00 00 00 00``;
- the magic is ``TR02`` when ``aliased_io`` is non-empty, else ``TR01``;
- the metadata is ``json.dumps(data, separators=(",", ":"))`` (so
  ``ensure_ascii``: every character outside printable ASCII becomes an escape)
  of an object with the keys, in order, ``io_bindings`` (each ``name``,
  ``dtype``, ``shape``, ``is_input``), ``aliased_io`` (each ``output``,
  ``input``, ``kind``, from a dict keyed by output, so an output appears once),
  ``hardware_compatible``, ``device_id``, ``serialized_metadata``,
  ``target_platform``;
- the engine starts at the next multiple of 16 after the metadata; the gap is
  zero bytes.

trtx's property tests drive it as a subprocess: ``python -m
trtx_bridge.tensorrt_blob`` reads a JSON list of cases on stdin and writes a
JSON list of lowercase hex blobs on stdout, one per case. A case is
``{"io_bindings": [{"name", "is_input", "dtype"?, "shape"?}], "aliased_io":
[[output, input, kind], ...], "hardware_compatible"?, "device_id"?,
"serialized_metadata"?, "target_platform"?, "engine_hex"?}``.
"""

from __future__ import annotations

import json
import struct
import sys
from collections.abc import Sequence
from typing import Any

HEADER_FORMAT = "<4sIIIQ8s"
HEADER_SIZE = struct.calcsize(HEADER_FORMAT)
RESERVED = b"\x01" + b"\x00" * 7
ENGINE_ALIGNMENT = 16


def metadata_json(
    io_bindings: Sequence[dict[str, Any]],
    aliased_io: dict[str, tuple[str, str]],
    hardware_compatible: bool = False,
    device_id: int = 0,
    serialized_metadata: str = "",
    target_platform: str = "",
) -> bytes:
    """The metadata bytes: compact JSON, keys in the serializer's order."""
    data = {
        "io_bindings": [
            {
                "name": b["name"],
                "dtype": b.get("dtype", ""),
                "shape": list(b.get("shape", [])),
                "is_input": bool(b.get("is_input", True)),
            }
            for b in io_bindings
        ],
        "aliased_io": [{"output": out, "input": inp, "kind": kind} for out, (inp, kind) in aliased_io.items()],
        "hardware_compatible": hardware_compatible,
        "device_id": device_id,
        "serialized_metadata": serialized_metadata,
        "target_platform": target_platform,
    }
    return json.dumps(data, separators=(",", ":")).encode("utf-8")


def serialize_blob(engine: bytes, metadata: bytes, aliased: bool) -> bytes:
    """Header, metadata, zero padding to a 16-aligned engine offset, engine."""
    engine_offset = -(-(HEADER_SIZE + len(metadata)) // ENGINE_ALIGNMENT) * ENGINE_ALIGNMENT
    header = struct.pack(
        HEADER_FORMAT,
        b"TR02" if aliased else b"TR01",
        HEADER_SIZE,
        len(metadata),
        engine_offset,
        len(engine),
        RESERVED,
    )
    return header + metadata + b"\x00" * (engine_offset - HEADER_SIZE - len(metadata)) + engine


def blob_for_case(case: dict[str, Any]) -> bytes:
    aliased: dict[str, tuple[str, str]] = {}
    for out, inp, kind in case.get("aliased_io", []):
        aliased[out] = (inp, kind)
    metadata = metadata_json(
        case["io_bindings"],
        aliased,
        hardware_compatible=case.get("hardware_compatible", False),
        device_id=case.get("device_id", 0),
        serialized_metadata=case.get("serialized_metadata", ""),
        target_platform=case.get("target_platform", ""),
    )
    return serialize_blob(bytes.fromhex(case.get("engine_hex", "")), metadata, bool(aliased))


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        sys.stderr.write("usage: python -m trtx_bridge.tensorrt_blob < cases.json > blobs.json\n")
        return 2
    cases = json.load(sys.stdin)
    json.dump([blob_for_case(c).hex() for c in cases], sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
