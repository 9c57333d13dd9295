"""Tell what kind of model file this is from its bytes, without unpickling it.

``torch.load`` on an untrusted file runs arbitrary code, so the decision to
refuse a pickle has to be made before any torch loader sees the file. Only the
zip central directory and, for a PT2 archive, its tiny ``archive_format`` record
are read.

Kinds:
  exported_program  torch.export.save output (PT2 archive, or the older flat zip
                    with serialized_exported_program.json)
  torchscript       torch.jit.save output (constants.pkl / code/)
  pickle            torch.save output (zip with data.pkl, or a legacy raw pickle)
  aoti_package      a PT2 archive without an ExportedProgram (AOTInductor package)
  unknown           anything else
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass

ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")


@dataclass(frozen=True)
class Sniffed:
    kind: str
    detail: str


def _relative_names(names: list[str]) -> list[str]:
    # torch's zip writers put every record under one top-level folder named
    # after the file ("archive/", "model/"); the flat EP format does not.
    out = []
    for name in names:
        head, sep, tail = name.partition("/")
        out.append(tail if sep else head)
    return out


def sniff_model_file(path: str) -> Sniffed:
    with open(path, "rb") as handle:
        head = handle.read(8)
    if head[:4] in ZIP_MAGICS:
        return _sniff_zip(path)
    # A raw pickle (torch.save with the legacy serializer) opens with the
    # PROTO opcode 0x80 and a protocol number 2..5.
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        return Sniffed("pickle", "legacy torch.save pickle")
    return Sniffed("unknown", "not a zip archive or a pickle")


def _sniff_zip(path: str) -> Sniffed:
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            relative = _relative_names(names)
            relset = set(relative)
            if "archive_format" in relset:
                fmt = _read_small(archive, names[relative.index("archive_format")])
                if fmt.strip() == b"pt2":
                    if any(r.startswith("models/") and r.endswith(".json") for r in relative):
                        return Sniffed("exported_program", "PT2 archive")
                    return Sniffed("aoti_package", "PT2 archive without an ExportedProgram")
            if "serialized_exported_program.json" in relset or "serialized_exported_program.json" in names:
                return Sniffed("exported_program", "torch.export archive (flat format)")
            if "constants.pkl" in relset or any(r.startswith("code/") for r in relative):
                return Sniffed("torchscript", "TorchScript archive")
            if "data.pkl" in relset:
                return Sniffed("pickle", "torch.save zip archive")
            return Sniffed("unknown", "zip archive of an unknown layout")
    except zipfile.BadZipFile as exc:
        return Sniffed("unknown", f"damaged zip archive ({exc})")


def _read_small(archive: zipfile.ZipFile, name: str, limit: int = 64) -> bytes:
    info = archive.getinfo(name)
    if info.file_size > limit:
        return b""
    return archive.read(name)


@dataclass(frozen=True)
class ModelRef:
    """What the request's ``model`` names: a file, or ``file.py:factory``."""

    path: str
    factory: str | None


def parse_model_ref(model: str) -> ModelRef:
    # Split on the last colon only when what precedes it is a .py file, so a
    # path containing a colon still names an archive.
    path, sep, attr = model.rpartition(":")
    if sep and path.endswith(".py") and attr:
        return ModelRef(path=os.path.abspath(path), factory=attr)
    return ModelRef(path=os.path.abspath(model), factory=None)
