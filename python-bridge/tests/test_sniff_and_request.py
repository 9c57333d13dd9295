"""Model-file sniffing and request parsing: the parts that must work without torch."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from trtx_bridge.errors import BridgeError
from trtx_bridge.request import parse_request
from trtx_bridge.sniff import parse_model_ref, sniff_model_file

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_ARCHIVES = os.path.join(HERE, "..", "..", "test", "doubles", "make_archives.py")


class Sniff(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        subprocess.run([sys.executable, MAKE_ARCHIVES, cls.tmp.name], check=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def kind(self, name):
        return sniff_model_file(os.path.join(self.tmp.name, name)).kind

    def test_kinds_are_told_from_content(self):
        self.assertEqual(self.kind("model.pt2"), "exported_program")
        self.assertEqual(self.kind("model.ep"), "exported_program")
        self.assertEqual(self.kind("scripted.pt"), "torchscript")
        self.assertEqual(self.kind("pickled.pt"), "pickle")
        self.assertEqual(self.kind("legacy.pt"), "pickle")
        self.assertEqual(self.kind("aoti.pt2"), "aoti_package")
        self.assertEqual(self.kind("notes.txt"), "unknown")

    def test_extension_does_not_decide(self):
        renamed = os.path.join(self.tmp.name, "pickled.pt2")
        with open(os.path.join(self.tmp.name, "pickled.pt"), "rb") as src, open(renamed, "wb") as dst:
            dst.write(src.read())
        self.assertEqual(sniff_model_file(renamed).kind, "pickle")


class ModelRef(unittest.TestCase):
    def test_factory_reference(self):
        ref = parse_model_ref("models/make.py:build")
        self.assertTrue(ref.path.endswith(os.path.join("models", "make.py")))
        self.assertEqual(ref.factory, "build")

    def test_archive_path_with_a_colon_is_a_path(self):
        ref = parse_model_ref("runs/12:00/model.pt2")
        self.assertIsNone(ref.factory)
        self.assertTrue(ref.path.endswith("model.pt2"))


def request(**changes):
    base = {
        "protocol": 2,
        "model": "m.pt2",
        "output": "o.pte",
        "methods": None,
        "budget_bytes": None,
        "zero_copy_kv": False,
        "allow_pickle": False,
        "check_only": False,
        "engine": "tensorrt",
        "reference": {"path": "/tmp/x/ref.json", "steps": 5, "program": "out.pte"},
    }
    base.update(changes)
    return json.dumps(base).encode()


class Request(unittest.TestCase):
    def assertRefused(self, raw, type_="REQUEST"):
        with self.assertRaises(BridgeError) as caught:
            parse_request(raw)
        self.assertEqual(caught.exception.type, type_)
        return caught.exception

    def test_a_valid_request(self):
        parsed = parse_request(request(methods=["prefill", "decode"], budget_bytes="9223372036854775807"))
        self.assertEqual(parsed.methods, ["prefill", "decode"])
        self.assertEqual(parsed.budget_bytes, 2**63 - 1)

    def test_refusals(self):
        self.assertRefused(b"not json")
        self.assertRefused(b"[]")
        self.assertRefused(request(extra=1))
        self.assertRefused(request(budget_bytes="9223372036854775808"))
        self.assertRefused(request(budget_bytes="-1"))
        self.assertRefused(request(budget_bytes="01"))
        self.assertRefused(request(budget_bytes=5))
        self.assertRefused(request(methods=[]))
        self.assertRefused(request(methods=["a", "a"]))
        self.assertRefused(request(methods=["not-an-id"]))
        self.assertRefused(request(zero_copy_kv="yes"))
        self.assertRefused(request(model=""))
        self.assertRefused(request(protocol=1), "PROTOCOL_VERSION")
        self.assertRefused(request(engine="tensorrt-llm"))
        self.assertRefused(request(engine=None))
        self.assertRefused(request(check_only=True))  # a check runs nothing eagerly

    def test_engine_is_read(self):
        self.assertEqual(parse_request(request(engine="reference")).engine, "reference")
        self.assertEqual(parse_request(request()).engine, "tensorrt")

    def test_reference_is_read_and_checked(self):
        ref = parse_request(request()).reference
        self.assertEqual((ref.path, ref.steps, ref.program), ("/tmp/x/ref.json", 5, "out.pte"))
        self.assertIsNone(parse_request(request(reference=None)).reference)
        for bad in (
            {"path": "/r.json", "steps": 0, "program": "p.pte"},
            {"path": "/r.json", "steps": True, "program": "p.pte"},
            {"path": "/r.json", "steps": 10001, "program": "p.pte"},
            {"path": "", "steps": 5, "program": "p.pte"},
            {"path": "/r.json", "steps": 5},
            {"path": "/r.json", "steps": 5, "program": "p.pte", "more": 1},
            "/r.json",
        ):
            self.assertRefused(request(reference=bad))
        missing = json.loads(request())
        del missing["reference"]
        self.assertRefused(json.dumps(missing).encode())

    def test_check_only_needs_no_model(self):
        self.assertTrue(parse_request(request(model="", output="", check_only=True, reference=None)).check_only)


if __name__ == "__main__":
    unittest.main()
