"""A full disk while the bridge writes (issue 43): the program's and the
reference file's writes are the bridge's ``WRITE`` error, never ``INTERNAL``,
and the error event names the errno (``ENOSPC``) so trtx says
``WRITE_NO_SPACE``. The OSError is raised as a full disk raises it."""

from __future__ import annotations

import errno
import json
import os
import tempfile
import unittest
from unittest import mock

from trtx_bridge.channel import Channel
from trtx_bridge.errors import BridgeError, os_error_name
from trtx_bridge.reference_outputs import write_document
from trtx_bridge.write import write_program


def _no_space() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class FullDisk(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def test_the_reference_file_is_a_write_error_naming_enospc_and_is_removed(self):
        path = os.path.join(self.dir.name, "out.reference.json")
        full = mock.patch("trtx_bridge.reference_outputs.json.dump", side_effect=_no_space())
        with full, self.assertRaises(BridgeError) as caught:
            write_document({"schema": "trtx.reference/1"}, path)
        self.assertEqual(caught.exception.type, "WRITE")
        self.assertEqual(caught.exception.stage, "reference")
        self.assertIn("No space left on device", caught.exception.message)
        self.assertEqual(os_error_name(caught.exception), "ENOSPC")
        self.assertFalse(os.path.exists(path))

    def test_the_program_is_a_write_error_naming_enospc_and_is_removed(self):
        path = os.path.join(self.dir.name, "out.pte")

        class Program:
            def write_to_file(self, handle):
                handle.write(b"ET12")
                raise _no_space()

        with self.assertRaises(BridgeError) as caught:
            write_program(Program(), path)
        self.assertEqual(caught.exception.type, "WRITE")
        self.assertEqual(os_error_name(caught.exception), "ENOSPC")
        self.assertFalse(os.path.exists(path))

    def test_a_failure_not_from_the_system_names_no_errno(self):
        unserializable = mock.patch("trtx_bridge.reference_outputs.json.dump", side_effect=TypeError("not JSON"))
        with unserializable, self.assertRaises(TypeError):
            write_document({}, os.path.join(self.dir.name, "r.json"))
        self.assertIsNone(os_error_name(RuntimeError("no")))
        # Found through a wrapper's cause or context, as a stage's BridgeError wraps a library's.
        try:
            try:
                raise OSError(errno.EDQUOT, "Disk quota exceeded")
            except OSError:
                raise RuntimeError("the library's own words")
        except RuntimeError as exc:
            self.assertEqual(os_error_name(exc), "EDQUOT")

    def test_the_error_event_carries_the_errno_only_when_there_is_one(self):
        events = []
        for name in ("ENOSPC", None):
            read, write = os.pipe()
            Channel(write, heartbeat_s=None).error("WRITE", "writing failed", "free space", "write", name)
            os.close(write)
            with os.fdopen(read, "rb") as f:
                events.append(json.loads(f.readline()))
        self.assertEqual(
            events[0],
            {"event": "error", "type": "WRITE", "message": "writing failed", "hint": "free space", "stage": "write", "errno": "ENOSPC"},
        )
        self.assertNotIn("errno", events[1])


if __name__ == "__main__":
    unittest.main()
