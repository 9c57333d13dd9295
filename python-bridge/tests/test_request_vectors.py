"""The bridge's request reader judges the shared protocol vectors as the TypeScript side does.

test/vectors/bridge-request.json is read by the zod schema and the generated JSON
Schema too (test/bridge-protocol.test.ts); a reader that disagrees with a vector is
wrong, so the protocol has one statement rather than three kept in step by hand.
"""

from __future__ import annotations

import json
import unittest
from pathlib import Path

from trtx_bridge.errors import BridgeError
from trtx_bridge.request import parse_request

VECTORS = Path(__file__).resolve().parents[2] / "test" / "vectors" / "bridge-request.json"


class RequestVectors(unittest.TestCase):
    def test_every_vector_is_judged_as_stated(self):
        doc = json.loads(VECTORS.read_text(encoding="utf-8"))
        self.assertEqual(doc["version"], 1)
        self.assertGreater(len(doc["vectors"]), 20)
        for vector in doc["vectors"]:
            with self.subTest(vector["name"]):
                raw = json.dumps(vector["request"]).encode("utf-8")
                if vector["expect"] == "ok":
                    parse_request(raw)
                else:
                    with self.assertRaises(BridgeError):
                        parse_request(raw)


if __name__ == "__main__":
    unittest.main()
