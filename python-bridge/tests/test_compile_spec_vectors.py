"""The bridge's compile-spec reader judges the shared vectors as TypeScript and the runner do.

test/vectors/compile-specs.json is read by test/compile-specs-vectors.test.ts
(decodeCompileSpecs) and native-runner/tests/compile_spec_vectors_test.cpp
too: decoded values, the error code of a refusal, and the warning codes in
order.
"""

from __future__ import annotations

import json
import unittest
from pathlib import Path

from trtx_bridge.compile_specs import decode_compile_specs

VECTORS = Path(__file__).resolve().parents[2] / "test" / "vectors" / "compile-specs.json"


def _value(spec: dict[str, str]) -> bytes:
    return bytes.fromhex(spec["hex"]) if "hex" in spec else spec["value"].encode("utf-8")


class CompileSpecVectors(unittest.TestCase):
    def test_every_vector_is_judged_as_stated(self):
        doc = json.loads(VECTORS.read_text(encoding="utf-8"))
        self.assertEqual(doc["version"], 1)
        self.assertGreater(len([v for v in doc["vectors"] if "refused" in v]), 20)
        for vector in doc["vectors"]:
            with self.subTest(vector["name"]):
                decoded = decode_compile_specs([(s["key"], _value(s)) for s in vector["specs"]])
                errors = [f.code for f in decoded.errors]
                if "refused" in vector:
                    self.assertEqual(errors, [vector["refused"]])
                    continue
                self.assertEqual(errors, [])
                self.assertEqual([f.code for f in decoded.findings], vector.get("warnings", []))
                got = {
                    "target": None if decoded.target is None else str(decoded.target),
                    "budget": None if decoded.budget is None else str(decoded.budget),
                    "zero_copy_kv": decoded.zero_copy_kv,
                }
                expect = vector["expect"]
                self.assertEqual(got, {k: expect.get(k) for k in ("target", "budget", "zero_copy_kv")})


if __name__ == "__main__":
    unittest.main()
