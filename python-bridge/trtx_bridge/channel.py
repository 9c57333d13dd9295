"""The event channel: the only writer of the bridge's real standard output.

torch, TensorRT and ExecuTorch all print. Some of it is Python ``print``, some
is native code writing straight to file descriptor 1, and either would land in
the middle of the event stream the TypeScript side parses line by line. So the
channel keeps a private duplicate of the original stdout for events and points
descriptor 1 at stderr: every stray write, Python or native, ends up in the log.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

from . import BRIDGE_VERSION, PROTOCOL_VERSION

_current: Channel | None = None


class Channel:
    def __init__(self, fd: int):
        self._fd = fd
        self._lock = threading.Lock()
        self._last_fraction = 0.0

    def _write(self, data: bytes) -> None:
        with self._lock:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]

    def send(self, event: dict[str, Any]) -> None:
        # ASCII escapes keep a path with undecodable bytes (a lone surrogate in
        # Python) encodable; allow_nan=False because NaN is not JSON.
        line = json.dumps(event, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
        self._write(line.encode("utf-8") + b"\n")

    def write_raw(self, data: bytes) -> None:
        """Write bytes that are not an event. Only the test doubles use this, to
        stand in for a native library that writes into the protocol stream."""
        self._write(data)

    def hello(self) -> None:
        self.send(
            {
                "event": "hello",
                "protocol": PROTOCOL_VERSION,
                "bridge_version": BRIDGE_VERSION,
                "pid": os.getpid(),
            }
        )

    def progress(self, stage: str, fraction: float, message: str | None = None) -> None:
        # A bar that moves backwards looks broken; stages are reported in order,
        # so clamp rather than trust every caller's arithmetic.
        fraction = min(1.0, max(self._last_fraction, float(fraction)))
        self._last_fraction = fraction
        event: dict[str, Any] = {"event": "progress", "stage": stage, "fraction": round(fraction, 4)}
        if message:
            event["message"] = message
        self.send(event)

    def warning(self, message: str, code: str | None = None) -> None:
        event: dict[str, Any] = {"event": "warning", "message": message}
        if code:
            event["code"] = code
        self.send(event)

    def result(self, payload: dict[str, Any]) -> None:
        event = {"event": "result"}
        event.update(payload)
        self.send(event)

    def error(self, type_: str, message: str, hint: str, stage: str | None = None) -> None:
        event: dict[str, Any] = {"event": "error", "type": type_, "message": message, "hint": hint}
        if stage:
            event["stage"] = stage
        self.send(event)


def open_channel() -> Channel:
    """Take over stdout for events. Call once, before anything can print."""
    global _current
    if _current is not None:
        return _current
    sys.stdout.flush()
    # os.dup returns a non-inheritable descriptor, so subprocesses that the
    # libraries spawn (compilers, workers) cannot write into the protocol.
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    _current = Channel(protocol_fd)
    return _current


def current() -> Channel:
    if _current is None:
        raise RuntimeError("the event channel is not open")
    return _current
