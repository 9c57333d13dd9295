"""Version 2 reference engines compute the partition: the program inside the
engine, run with ExecuTorch's runtime, gives what the partition (and the
model) gives in eager PyTorch -- and stops doing so when a weight changes.

Needs torch and executorch (trtx's managed environment); run with
``PYTHONPATH=python-bridge python -m unittest discover -s python-bridge/tests_real``.
"""

from __future__ import annotations

import base64
import json
import struct
import unittest

import flatbuffers
import torch
from torch import nn
from trtx_bridge.reference import lower
from trtx_bridge.reference.blob import HEADER_FORMAT, HEADER_SIZE
from trtx_bridge.reference.plan import ReferenceLoweringError
from trtx_bridge.reference_outputs import run_eager, step_input


def _engines(edge, method="forward"):
    """(metadata, engine table) of each TensorRT delegate of ``method``."""
    program = edge.exported_program(method)
    out = []
    for node in program.graph_module.graph.nodes:
        if node.op == "get_attr" and node.target.startswith("lowered_module"):
            blob = getattr(program.graph_module, node.target).processed_bytes
            _, meta_off, meta_size, engine_off, engine_size, _ = struct.unpack(HEADER_FORMAT, blob[:HEADER_SIZE])
            engine = bytes(blob[engine_off : engine_off + engine_size])
            out.append((json.loads(blob[meta_off : meta_off + meta_size]), engine))
    return out


def _field(engine: bytes, slot: int) -> flatbuffers.table.Table:
    root = flatbuffers.table.Table(bytearray(engine), flatbuffers.encode.Get(flatbuffers.packer.uoffset, engine, 0))
    return root, root.Offset(4 + 2 * slot)


def _read_engine(engine: bytes) -> dict:
    assert engine[4:8] == b"TRXE"
    root, version = _field(engine, 0)
    _, steps = _field(engine, 1)
    _, weights = _field(engine, 3)
    _, program = _field(engine, 5)
    start = root.Vector(program)
    return {
        "version": root.Get(flatbuffers.number_types.Uint32Flags, root.Pos + version),
        "steps": root.VectorLen(steps),
        "weights": root.Get(flatbuffers.number_types.Uint64Flags, root.Pos + weights),
        "program": bytes(root.Bytes[start : start + root.VectorLen(program)]),
    }


def _run_program(pte: bytes, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(pte).load_method("forward")
    return list(method.execute(inputs))


class Decode(nn.Module):
    """A KV decode step whose engine returns the whole updated cache, a float
    result and an int64 (the position after this one)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, 2, 8, 4), persistent=False)
        self.proj = nn.Linear(8, 8)
        self.out = nn.Linear(8, 8)

    def forward(self, x, input_pos):
        k = self.proj(x).view(1, 1, 2, 4).transpose(1, 2)
        self.k_cache.index_copy_(2, input_pos, k)
        return self.out(self.k_cache.sum(dim=2).reshape(1, 8)) * 2.0, input_pos + 1


def _export(module, *inputs):
    # The documented way: eval(), no no_grad(), parameters still require grad.
    return torch.export.export(module.eval(), inputs)


class EngineProgram(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)

    def test_the_engine_is_version_2_and_its_program_computes_the_partition(self):
        model = Decode()
        with torch.no_grad():
            edge = lower({"forward": _export(model, torch.randn(1, 1, 8), torch.tensor([0]))})
        [(meta, engine)] = _engines(edge)
        fields = _read_engine(engine)
        self.assertEqual((fields["version"], fields["steps"]), (2, 0))
        # The weights are inside: the parameters, plus the lifted constants (the 2.0).
        params = sum(p.numel() * p.element_size() for p in model.parameters())
        self.assertTrue(params <= fields["weights"] < params + 64, fields["weights"])
        self.assertGreater(len(fields["program"]), params)
        self.assertEqual(fields["program"][4:8], b"ET12")
        # Bindings as before: the cache update aliased, outputs in order.
        self.assertEqual([b["name"] for b in meta["io_bindings"] if b["is_input"]], ["x", "b_k_cache", "input_pos"])
        self.assertEqual(meta["aliased_io"], [{"output": "output0", "input": "b_k_cache", "kind": "kv_cache_update"}])

        x, cache, pos = torch.randn(1, 1, 8), torch.randn(1, 2, 8, 4), torch.tensor([3])
        outputs = _run_program(fields["program"], [x, cache.clone(), pos])
        # Eager: the same step on a model whose cache holds `cache`.
        model.k_cache.copy_(cache)
        with torch.no_grad():
            expected, next_pos = model(x, pos)
        torch.testing.assert_close(outputs[0], model.k_cache)  # output0: the whole updated cache
        self.assertTrue(any(o.dtype == torch.int64 and torch.equal(o, next_pos) for o in outputs[1:]), outputs)
        self.assertTrue(any(o.dtype == torch.float32 and torch.allclose(o, expected, atol=1e-5) for o in outputs[1:]), outputs)

    def test_a_perturbed_weight_separates_the_reference_from_the_program(self):
        # The reference file's outputs against the engine's program, run as
        # the runner does (the updated cache fed back each step): equal for
        # the model the engine was built from, not for one weight changed.
        model = Decode()
        ep = _export(model, torch.randn(1, 1, 8), torch.tensor([0]))
        with torch.no_grad():
            [(_, engine)] = _engines(lower({"forward": ep}))
        pte = _read_engine(engine)["program"]
        cache = torch.zeros(1, 2, 8, 4)
        results = []
        for s in range(3):
            outputs = _run_program(
                pte, [step_input(torch.empty(1, 1, 8), s, ep), cache, step_input(torch.empty(1, dtype=torch.int64), s, ep)]
            )
            cache = outputs[0]
            results.append(next(o for o in outputs[1:] if o.dtype == torch.float32))

        def matches(program) -> bool:
            [method] = run_eager({"forward": program}, 3)
            for got, step in zip(results, method["steps"]):
                ref = torch.frombuffer(bytearray(base64.b64decode(step["outputs"][0]["data"])), dtype=torch.float32)
                if not torch.allclose(got.reshape(-1), ref, atol=1e-5):
                    return False
            return True

        self.assertTrue(matches(ep))
        with torch.no_grad():
            model.out.weight[0, 0] += 0.5
        self.assertFalse(matches(_export(model, torch.randn(1, 1, 8), torch.tensor([0]))))

    def test_an_operator_without_a_cpu_kernel_is_refused_at_export_by_name(self):
        class Erfinv(nn.Module):
            def forward(self, x):
                return torch.erfinv(torch.tanh(x * 2.0) * 0.5) + 1.0

        with self.assertRaises(ReferenceLoweringError) as raised, torch.no_grad():
            lower({"forward": _export(Erfinv(), torch.randn(4))}, options={"forward": {"min_block_size": 1}})
        self.assertIn("aten::erfinv.out", str(raised.exception))
        self.assertIn("partition taking (x)", str(raised.exception))

    def test_any_dtype_the_kernels_run_is_an_engine_output(self):
        class Mixed(nn.Module):
            def forward(self, x, n):
                return (x.to(torch.float16) * 3).to(torch.bfloat16), (n * 2).to(torch.int32), x > 0

        inputs = (torch.randn(2, 3), torch.arange(6).reshape(2, 3))
        with torch.no_grad():
            edge = lower({"forward": _export(Mixed(), *inputs)}, options={"forward": {"min_block_size": 1}})
        [(_, engine)] = _engines(edge)
        outputs = _run_program(_read_engine(engine)["program"], list(inputs))
        expected = Mixed()(*inputs)
        self.assertEqual([o.dtype for o in outputs], [e.dtype for e in expected])
        for got, want in zip(outputs, expected):
            torch.testing.assert_close(got, want)


if __name__ == "__main__":
    unittest.main()
