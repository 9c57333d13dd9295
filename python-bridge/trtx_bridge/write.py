"""The last stage: the finalized program to its file, whole or not at all."""

from __future__ import annotations

import hashlib
import os
from typing import Any

from .errors import BridgeError, describe_exception


def write_program(program: Any, path: str) -> dict[str, Any]:
    try:
        with open(path, "wb") as handle:
            program.write_to_file(handle)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as exc:
        # A partial file must never look like a program.
        try:
            os.unlink(path)
        except OSError:
            pass
        if isinstance(exc, Exception):
            raise BridgeError(
                "WRITE",
                f"writing {path} failed: {describe_exception(exc)}",
                "Check free space and that the folder is writable.",
                stage="write",
            ) from exc
        raise
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return {"path": path, "bytes": size, "sha256": digest.hexdigest()}
