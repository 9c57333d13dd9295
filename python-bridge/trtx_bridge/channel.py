"""The event channel: the only writer of the bridge's real standard output.

torch, TensorRT and ExecuTorch all print. Some of it is Python ``print``, some
is native code writing straight to file descriptor 1, and either would land in
the middle of the event stream the TypeScript side parses line by line. So the
channel keeps a private duplicate of the original stdout for events and points
descriptor 1 at stderr: every stray write, Python or native, ends up in the log.

Stages of a real-size model run for minutes (to_edge, lowering every
partition, to_executorch, the eager reference run, writing gigabytes) without
a natural point to report from. So the channel keeps a heartbeat: when no
event has gone out for ``HEARTBEAT_S`` seconds, it repeats the current stage's
progress, its fraction unchanged and its message followed by the seconds
spent in the stage (``lower: lowering ... (35 s)``). The protocol already
allows any number of progress events of a stage; nothing new is needed to
read them. The heartbeat stops before the result or error, which stays last.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

from . import BRIDGE_VERSION, PROTOCOL_VERSION

_current: Channel | None = None

# At most this long without an event while a stage runs (trtx shows every
# progress event; issue 36 asks for one at least every 5 s).
HEARTBEAT_S = 4.0
# A detail (``Channel.detail``) goes out at once only this long after the
# stage's last progress or detail began; a quicker one waits for the
# heartbeat, so fast steps do not flood trtx's log.
DETAIL_S = 1.0


class Channel:
    def __init__(self, fd: int, heartbeat_s: float | None = HEARTBEAT_S, detail_s: float = DETAIL_S):
        self._fd = fd
        self._detail_s = detail_s
        self._lock = threading.Lock()
        self._last_fraction = 0.0
        # The stage the heartbeat repeats: (stage, fraction, message, started).
        self._stage: tuple[str, float, str | None, float] | None = None
        self._last_sent = time.monotonic()
        self._closed = False
        self._wake = threading.Condition(self._lock)
        if heartbeat_s is not None and heartbeat_s > 0:
            thread = threading.Thread(target=self._heartbeat, args=(heartbeat_s,), name="trtx-heartbeat", daemon=True)
            thread.start()

    def _write_locked(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        self._last_sent = time.monotonic()

    def _write(self, data: bytes) -> None:
        with self._lock:
            if self._closed:
                return
            self._write_locked(data)

    def _heartbeat(self, interval: float) -> None:
        with self._lock:
            while not self._closed:
                now = time.monotonic()
                due = self._last_sent + interval
                if now < due or self._stage is None:
                    self._wake.wait(max(due - now, 0.05) if self._stage is not None else interval)
                    continue
                stage, fraction, message, started = self._stage
                text = f"{message} ({now - started:.0f} s)" if message else f"{now - started:.0f} s"
                event = {"event": "progress", "stage": stage, "fraction": round(fraction, 4), "message": text}
                try:
                    self._write_locked(_encode(event))
                except OSError:
                    # The reader is gone; the main thread learns it on its next write.
                    return

    def close(self, final: dict[str, Any] | None = None) -> None:
        """Stops the heartbeat, after writing ``final`` (the result or error) when given: nothing follows it."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._wake.notify_all()
            if final is not None:
                self._write_locked(_encode(final))

    def send(self, event: dict[str, Any]) -> None:
        self._write(_encode(event))

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
        with self._lock:
            # A new stage (or a new step within one) restarts the clock the heartbeat reports.
            started = time.monotonic()
            if self._stage is not None and self._stage[0] == stage and self._stage[2] == message:
                started = self._stage[3]
            self._stage = (stage, fraction, message, started)
            self._wake.notify_all()
        self.send(event)

    def detail(self, text: str) -> None:
        """Says what the current stage is doing now: its progress again, same
        fraction, the stage's message followed by ``text`` (a long stage's
        steps: which partition is being emitted, which reference step runs)."""
        with self._lock:
            current = self._stage
            if current is None:
                return
            stage, fraction, message, _ = current
            base = message.split(" -- ", 1)[0] if message else ""
            message = f"{base} -- {text}" if base else text
            if time.monotonic() - self._stage[3] < self._detail_s:
                # The previous step began under detail_s ago: the heartbeat says this one.
                self._stage = (stage, fraction, message, time.monotonic())
                return
        self.progress(stage, fraction, message)

    def warning(self, message: str, code: str | None = None) -> None:
        event: dict[str, Any] = {"event": "warning", "message": message}
        if code:
            event["code"] = code
        self.send(event)

    def result(self, payload: dict[str, Any]) -> None:
        event = {"event": "result"}
        event.update(payload)
        self.close(event)

    def error(self, type_: str, message: str, hint: str, stage: str | None = None, errno: str | None = None) -> None:
        event: dict[str, Any] = {"event": "error", "type": type_, "message": message, "hint": hint}
        if stage:
            event["stage"] = stage
        if errno:
            event["errno"] = errno
        self.close(event)


def _encode(event: dict[str, Any]) -> bytes:
    # ASCII escapes keep a path with undecodable bytes (a lone surrogate in
    # Python) encodable; allow_nan=False because NaN is not JSON.
    return json.dumps(event, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("utf-8") + b"\n"


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


def report_detail(text: str) -> None:
    """``Channel.detail`` on the open channel; nothing when none is open (a
    library call outside the bridge, a test)."""
    if _current is not None:
        _current.detail(text)


def current() -> Channel:
    if _current is None:
        raise RuntimeError("the event channel is not open")
    return _current
