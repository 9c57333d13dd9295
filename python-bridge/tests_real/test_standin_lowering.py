"""The reference lowering against real torch.export / ExecuTorch programs.

Needs torch and executorch (trtx's managed environment); run with
``PYTHONPATH=python-bridge python -m unittest discover -s python-bridge/tests_real``
(``test/real-mutation-order.test.ts`` does).
"""

from __future__ import annotations

import json
import struct
import unittest

import torch
from torch import nn
from trtx_bridge.standin_lowering import lower
from trtx_bridge.standin_lowering.blob import HEADER_FORMAT, HEADER_SIZE, Binding, BlobMetadata, serialize_blob
from trtx_bridge.standin_lowering.lower import check_backend


def _blobs(edge, method="forward"):
    program = edge.exported_program(method)
    out = []
    for node in program.graph_module.graph.nodes:
        if node.op == "get_attr" and node.target.startswith("lowered_module"):
            module = getattr(program.graph_module, node.target)
            out.append((module.backend_id, module.processed_bytes, [(s.key, bytes(s.value)) for s in module.compile_specs]))
    return out


def _parse(blob):
    magic, meta_off, meta_size, engine_off, engine_size, reserved = struct.unpack(HEADER_FORMAT, blob[:HEADER_SIZE])
    return magic, blob[meta_off : meta_off + meta_size], engine_off, engine_size, reserved


class Decode(nn.Module):
    def __init__(self, write_positions=1):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, 2, 8, 4), persistent=False)
        self.proj = nn.Linear(8, 8)
        self.out = nn.Linear(8, 8)

    def forward(self, x, input_pos):
        t = x.shape[1]
        k = self.proj(x).view(1, t, 2, 4).transpose(1, 2)
        self.k_cache.index_copy_(2, input_pos, k)
        return self.out(self.k_cache.sum(dim=2).reshape(1, 8)) * 2.0


def _export(module, t=1):
    module = module.eval()
    for p in module.parameters():
        p.requires_grad_(False)
    with torch.no_grad():
        return torch.export.export(module, (torch.randn(1, t, 8), torch.arange(t)))


class Blob(unittest.TestCase):
    def test_the_serializer_writes_torch_tensorrts_layout(self):
        meta = BlobMetadata(
            [Binding("b_k_cache", True), Binding("x\u00e9", True), Binding("output0", False)], [("output0", "b_k_cache", "kv_cache_update")]
        )
        blob = serialize_blob(b"E" * 5, meta)
        magic, text, engine_off, engine_size, reserved = _parse(blob)
        self.assertEqual(magic, b"TR02")
        self.assertEqual(engine_off % 16, 0)
        self.assertEqual((engine_size, blob[engine_off:]), (5, b"E" * 5))
        self.assertEqual(reserved, b"\x01" + b"\x00" * 7)
        # Python's json.dumps: compact separators, \\u escapes, keys in the parser's order.
        self.assertEqual(
            text.decode("ascii"),
            '{"io_bindings":[{"name":"b_k_cache","dtype":"","shape":[],"is_input":true},'
            '{"name":"x\\u00e9","dtype":"","shape":[],"is_input":true},'
            '{"name":"output0","dtype":"","shape":[],"is_input":false}],'
            '"aliased_io":[{"output":"output0","input":"b_k_cache","kind":"kv_cache_update"}],'
            '"hardware_compatible":false,"device_id":0,"serialized_metadata":"","target_platform":""}',
        )
        self.assertEqual(_parse(serialize_blob(b"", BlobMetadata([Binding("x", True), Binding("output0", False)])))[0], b"TR01")

    def test_the_serializer_refuses_what_the_runtime_would(self):
        for bad in (
            BlobMetadata([Binding("x", True), Binding("x", False)]),
            BlobMetadata([Binding("", True)]),
            BlobMetadata([Binding("x", True), Binding("output0", False)], [("output0", "y", "kv_cache_update")]),
            BlobMetadata([Binding("x", True), Binding("output0", False)], [("output0", "x", "cache")]),
            # An output aliased twice: the serializer's dict keyed by output would drop one.
            BlobMetadata(
                [Binding("x", True), Binding("y", True), Binding("output0", False)],
                [("output0", "x", "user"), ("output0", "y", "user")],
            ),
        ):
            with self.assertRaises(ValueError):
                bad.to_json()


class Lowering(unittest.TestCase):
    def test_a_one_position_index_copy_is_a_kv_cache_update_written_in_place(self):
        edge = lower({"forward": _export(Decode())})
        [(backend, blob, specs)] = _blobs(edge)
        self.assertEqual(backend, "TensorRTBackend")
        self.assertEqual(specs, [("target_device", b"cuda:0")])
        magic, text, *_ = _parse(blob)
        meta = json.loads(text)
        self.assertEqual(magic, b"TR02")
        self.assertEqual(meta["aliased_io"], [{"output": "output0", "input": "b_k_cache", "kind": "kv_cache_update"}])
        self.assertEqual([b["name"] for b in meta["io_bindings"]], ["x", "b_k_cache", "input_pos", "output0", "output1"])

    def test_several_positions_are_a_copy_back_as_in_torch_tensorrts_converter(self):
        edge = lower({"forward": _export(Decode(), t=3)})
        [(_, blob, _)] = _blobs(edge)
        magic, text, *_ = _parse(blob)
        self.assertEqual((magic, json.loads(text)["aliased_io"]), (b"TR01", []))

    def test_a_budget_is_baked_before_target_device_and_builds_streaming_engines(self):
        edge = lower({"forward": _export(Decode())}, weight_streaming_budget=8 << 30)
        [(_, blob, specs)] = _blobs(edge)
        self.assertEqual(specs, [("weight_streaming_budget", b"8589934592"), ("target_device", b"cuda:0")])
        _, _, engine_off, _, _ = _parse(blob)
        self.assertEqual(blob[engine_off + 4 : engine_off + 8], b"TRXE")

    def test_torch_executed_ops_split_the_engine_and_min_block_size_leaves_small_ones_to_executorch(self):
        split = lower({"forward": _export(Decode())}, options={"forward": {"torch_executed_ops": ["aten.mul.Tensor"], "min_block_size": 1}})
        self.assertEqual(len(_blobs(split)), 1)  # the mul was the graph's last op: one engine before it
        ops = [n.target for n in split.exported_program().graph_module.graph.nodes if n.op == "call_function"]
        self.assertTrue(any("mul" in str(t) for t in ops))
        # Below min_block_size a block stays with ExecuTorch -- unless it holds the
        # KV update kept whole, for which ExecuTorch has no kernel.
        kept = lower({"forward": _export(Decode())}, options={"forward": {"min_block_size": 1000}})
        self.assertEqual(len(_blobs(kept)), 1)
        nothing = lower(
            {"forward": _export(Decode())},
            options={"forward": {"min_block_size": 1000, "torch_executed_ops": ["aten.index_copy.default"]}},
        )
        self.assertEqual(_blobs(nothing), [])
        from trtx_bridge.standin_lowering import executorch_config

        nothing.to_executorch(executorch_config())  # the update decomposed: a program ExecuTorch can finalize

    def test_another_tensorrt_backend_registered_first_is_refused(self):
        # ExecuTorch takes the first BackendDetails subclass with the id's name
        # (Torch-TensorRT's, once torch_tensorrt.executorch is imported).
        import subprocess
        import sys

        script = (
            "from executorch.exir.backend.backend_details import BackendDetails\n"
            "class TensorRTBackend(BackendDetails):\n"
            "    @staticmethod\n"
            "    def preprocess(ep, specs): raise AssertionError('the impostor ran')\n"
            "from trtx_bridge.standin_lowering.lower import BackendConflict, check_backend\n"
            "try:\n"
            "    check_backend()\n"
            "except BackendConflict as e:\n"
            "    print('refused:', e)\n"
        )
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
        self.assertEqual(run.returncode, 0, run.stderr[-2000:])
        self.assertIn("refused: another TensorRTBackend (__main__)", run.stdout)
        check_backend()  # here, ours is the one


if __name__ == "__main__":
    unittest.main()
