"""The bridge's byte-count readers judge the shared size vectors as TypeScript and the runner do.

test/vectors/sizes.json is read by test/sizes-vectors.test.ts and by the
runner's byte_count_vectors_test too. The bridge reads two of its grammars:
``request`` (a request's budget_bytes, trtx_bridge/request.py) and
``byte_count`` (a compile spec's weight_streaming_budget,
trtx_bridge/compile_specs.py). ``size`` (8GiB) is the trtx CLI's alone: it
sends decimal bytes.
"""

from __future__ import annotations

import json
import unittest
from pathlib import Path

from trtx_bridge.compile_specs import read_byte_count
from trtx_bridge.errors import BridgeError
from trtx_bridge.request import parse_budget_bytes

VECTORS = Path(__file__).resolve().parents[2] / "test" / "vectors" / "sizes.json"


def _outcome(read: int | str) -> dict[str, str]:
    return {"bytes": str(read)} if isinstance(read, int) else {"refused": read}


class SizeVectors(unittest.TestCase):
    def setUp(self):
        self.doc = json.loads(VECTORS.read_text(encoding="utf-8"))
        self.assertEqual(self.doc["version"], 1)
        self.assertGreater(len(self.doc["vectors"]), 40)

    def test_byte_count_is_read_problem_for_problem(self):
        for vector in self.doc["vectors"]:
            with self.subTest(vector["name"]):
                self.assertEqual(_outcome(read_byte_count(vector["text"].encode("utf-8"))), vector["byte_count"])

    def test_request_budget_is_judged_as_the_protocol_states(self):
        for vector in self.doc["vectors"]:
            with self.subTest(vector["name"]):
                try:
                    got = {"bytes": str(parse_budget_bytes(vector["text"]))}
                except BridgeError:
                    got = {"refused": "invalid"}
                self.assertEqual(got, vector["request"])


if __name__ == "__main__":
    unittest.main()
