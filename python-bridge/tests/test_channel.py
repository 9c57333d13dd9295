"""The event channel's heartbeat: a stage that runs long still reports, at
most ``interval`` apart, with its seconds; nothing follows the result."""

from __future__ import annotations

import json
import os
import threading
import time
import unittest

from trtx_bridge.channel import Channel


class Reader:
    """Reads the events a channel writes into a pipe, with their arrival times."""

    def __init__(self, fd: int):
        self.events: list[tuple[float, dict]] = []
        self._fd = fd
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with os.fdopen(self._fd, "rb") as f:
            for line in f:
                self.events.append((time.monotonic(), json.loads(line)))

    def join(self) -> list[tuple[float, dict]]:
        self._thread.join(5)
        return self.events


def _channel(interval: float | None, detail_s: float = 0.0) -> tuple[Channel, Reader, int]:
    read, write = os.pipe()
    return Channel(write, heartbeat_s=interval, detail_s=detail_s), Reader(read), write


class Heartbeat(unittest.TestCase):
    def test_a_long_stage_reports_every_interval_with_its_seconds_and_nothing_follows_the_result(self):
        channel, reader, write = _channel(0.1)
        channel.hello()
        channel.progress("lower", 0.7, "lowering")
        time.sleep(0.55)
        channel.result({"mode": "export"})
        time.sleep(0.3)  # a heartbeat due now must not come after the result
        os.close(write)
        events = reader.join()
        kinds = [e["event"] for _, e in events]
        self.assertEqual(kinds[0], "hello")
        self.assertEqual(kinds[-1], "result")
        self.assertEqual(kinds.count("result"), 1)
        beats = [e for _, e in events if e["event"] == "progress"][1:]
        self.assertGreaterEqual(len(beats), 3, events)
        for beat in beats:
            self.assertEqual((beat["stage"], beat["fraction"]), ("lower", 0.7))
            self.assertRegex(beat["message"], r"^lowering \(\d+ s\)$")
        times = [t for t, e in events if e["event"] != "hello"]
        self.assertLess(max(b - a for a, b in zip(times, times[1:])), 0.1 + 0.15)

    def test_no_heartbeat_before_a_stage_or_while_events_flow(self):
        channel, reader, write = _channel(0.2)
        channel.hello()
        time.sleep(0.35)  # no stage yet: nothing to repeat
        for i in range(6):
            channel.progress("lower", 0.7 + i / 100, f"partition {i}")
            time.sleep(0.05)
        channel.error("LOWER", "failed", "hint", stage="lower")
        os.close(write)
        events = [e for _, e in reader.join()]
        self.assertEqual([e["event"] for e in events], ["hello"] + ["progress"] * 6 + ["error"])
        self.assertEqual([e["message"] for e in events[1:-1]], [f"partition {i}" for i in range(6)])

    def test_a_detail_keeps_the_stage_and_fraction_and_replaces_the_previous_detail(self):
        channel, reader, write = _channel(None)
        channel.detail("before any stage: nothing")
        channel.progress("lower", 0.7, "lowering")
        channel.detail("partition 1")
        channel.detail("partition 2")
        channel.result({})
        os.close(write)
        events = [e for _, e in reader.join()]
        self.assertEqual(
            [(e.get("stage"), e.get("fraction"), e.get("message")) for e in events],
            [
                ("lower", 0.7, "lowering"),
                ("lower", 0.7, "lowering -- partition 1"),
                ("lower", 0.7, "lowering -- partition 2"),
                (None, None, None),
            ],
        )

    def test_a_detail_right_after_an_event_waits_for_the_heartbeat(self):
        channel, reader, write = _channel(0.2, detail_s=10.0)
        channel.progress("reference", 0.1, "running")
        for step in range(1, 6):
            channel.detail(f"step {step} of 5")
        time.sleep(0.3)
        channel.result({})
        os.close(write)
        messages = [e.get("message") for _, e in reader.join()]
        self.assertEqual(messages[0], "running")
        self.assertRegex(messages[1], r"^running -- step 5 of 5 \(\d+ s\)$")
        # Steps 1 to 4 came and went within the detail interval: never sent.
        self.assertFalse([m for m in messages if m and "step 5" not in m and m != "running"], messages)

    def test_without_a_heartbeat_nothing_is_added(self):
        channel, reader, write = _channel(None)
        channel.progress("lower", 0.5, "x")
        time.sleep(0.2)
        channel.result({})
        os.close(write)
        self.assertEqual([e["event"] for _, e in reader.join()], ["progress", "result"])


if __name__ == "__main__":
    unittest.main()
