"""Version 3 reference engines compute the partition: the program inside the
engine, run with ExecuTorch's runtime and its weights resolved by name from
the outer program's named data, gives what the partition (and the model)
gives in eager PyTorch -- and stops doing so when a weight changes. The
weights are outside the engine: every parameter and constant buffer of the
engine's program is EXTERNAL, and the outer program's named data holds each
key once, with the tensor's bytes.

Needs torch and executorch (trtx's managed environment); run with
``PYTHONPATH=python-bridge python -m unittest discover -s python-bridge/tests_real``.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import tempfile
import unittest

import flatbuffers
import torch
from torch import nn
from trtx_bridge.reference_outputs import run_eager, step_input
from trtx_bridge.standin_lowering import executorch_config, lower
from trtx_bridge.standin_lowering.blob import HEADER_FORMAT, HEADER_SIZE
from trtx_bridge.standin_lowering.plan import StandinLoweringError


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


def _inner(pte: bytes):
    from executorch.exir._serialize._program import deserialize_pte_binary

    return deserialize_pte_binary(pte).program


def _constants(pte: bytes) -> tuple[dict[str, object], int]:
    """The engine program's EXTERNAL tensors by FQN, and the bytes of the
    constants it keeps inside (lifted literals only)."""
    from executorch.exir.schema import Tensor, TensorDataLocation

    program = _inner(pte)
    external = {}
    for value in program.execution_plan[0].values:
        t = value.val
        if isinstance(t, Tensor) and t.extra_tensor_info is not None and t.extra_tensor_info.location == TensorDataLocation.EXTERNAL:
            external[t.extra_tensor_info.fully_qualified_name] = t
    return external, sum(len(b.storage) for b in program.constant_buffer)


def _outer_named_data(edge) -> dict[str, bytes]:
    """The finalized outer program's named data, read back from its bytes."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    with torch.no_grad():
        outer = deserialize_pte_binary(bytes(edge.to_executorch(executorch_config()).buffer))
    named = outer.named_data
    return {} if named is None else {k: bytes(named.buffers[e.buffer_index]) for k, e in named.pte_data.items()}


def _run_program(pte: bytes, inputs: list[torch.Tensor], named: dict[str, bytes] | None = None) -> list[torch.Tensor]:
    """Runs the engine's program with its EXTERNAL weights taken by key from
    ``named`` (the outer program's named data), as the runner resolves them.

    ExecuTorch's Python runtime resolves external tensors from a ``.ptd``
    (FlatTensor) file, whose map also answers each key's tensor layout; the
    file is made here from the outer program's bytes and the layouts the
    engine's program declares."""
    from executorch.exir._serialize._serialize import _extract_external_tensor_layouts
    from executorch.exir._serialize.data_serializer import DataEntry, DataPayload
    from executorch.extension.flat_tensor.serialize.serialize import FlatTensorSerializer
    from executorch.runtime import Runtime

    layouts = _extract_external_tensor_layouts(_inner(pte))
    if not layouts:
        return list(Runtime.get().load_program(pte).load_method("forward").execute(inputs))
    keys = sorted(layouts)
    payload = DataPayload(buffers=[named[k] for k in keys], named_data={k: DataEntry(i, 16, layouts[k]) for i, k in enumerate(keys)})
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "weights.ptd")
        with open(path, "wb") as f:
            FlatTensorSerializer().serialize(payload).write_to_file(f)
        method = Runtime.get().load_program(pte, data_path=path).load_method("forward")
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

    def test_the_engine_is_version_3_its_weights_are_named_data_and_its_program_computes_the_partition(self):
        model = Decode()
        with torch.no_grad():
            edge = lower({"forward": _export(model, torch.randn(1, 1, 8), torch.tensor([0]))})
        [(meta, engine)] = _engines(edge)
        fields = _read_engine(engine)
        self.assertEqual((fields["version"], fields["steps"]), (3, 0))
        self.assertEqual(fields["program"][4:8], b"ET12")
        # Every parameter is an EXTERNAL tensor named by its FQN; only the
        # lifted literals (the 2.0, the 1) stay inside the program.
        params = dict(model.named_parameters())
        external, inside = _constants(fields["program"])
        self.assertEqual(sorted(external), sorted(params))
        self.assertLess(inside, 64)
        self.assertEqual(fields["weights"], sum(p.numel() * p.element_size() for p in params.values()))
        # The outer program's named data holds each key with the tensor's bytes.
        named = _outer_named_data(edge)
        self.assertEqual(sorted(named), sorted(params))
        for key, p in params.items():
            self.assertEqual(named[key], p.detach().contiguous().view(torch.uint8).numpy().tobytes(), key)
        # Bindings as before: the cache update aliased, outputs in order.
        self.assertEqual([b["name"] for b in meta["io_bindings"] if b["is_input"]], ["x", "b_k_cache", "input_pos"])
        self.assertEqual(meta["aliased_io"], [{"output": "output0", "input": "b_k_cache", "kind": "kv_cache_update"}])

        x, cache, pos = torch.randn(1, 1, 8), torch.randn(1, 2, 8, 4), torch.tensor([3])
        outputs = _run_program(fields["program"], [x, cache.clone(), pos], named)
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
            edge = lower({"forward": ep})
        [(_, engine)] = _engines(edge)
        pte, named = _read_engine(engine)["program"], _outer_named_data(edge)
        cache = torch.zeros(1, 2, 8, 4)
        results = []
        for s in range(3):
            outputs = _run_program(
                pte, [step_input(torch.empty(1, 1, 8), s, ep), cache, step_input(torch.empty(1, dtype=torch.int64), s, ep)], named
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

    def test_the_engine_stays_small_whatever_the_weights(self):
        # A FlatBuffer vector cannot pass 2 GiB: the engine must not grow with
        # the model. 4 MiB of weights, an engine of a few KiB.
        model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 8))
        with torch.no_grad():
            edge = lower({"forward": _export(model, torch.randn(1, 1024))})
        [(_, engine)] = _engines(edge)
        weights = sum(p.numel() * p.element_size() for p in model.parameters())
        self.assertGreater(weights, 4 << 20)
        self.assertLess(len(engine), 64 << 10)
        self.assertEqual(_read_engine(engine)["weights"], weights)
        named = _outer_named_data(edge)
        self.assertEqual(sum(len(b) for b in named.values()), weights)
        x = torch.randn(1, 1024)
        [out] = _run_program(_read_engine(engine)["program"], [x], named)
        torch.testing.assert_close(out, model(x).detach(), rtol=1e-4, atol=1e-4)

    def test_preprocess_gets_a_program_of_its_own_that_shares_the_weights(self):
        # ExecuTorch's default copy for preprocess deep-copies every weight;
        # the reference backend's shares them (the graph is still its own),
        # and ExecuTorch calls it on the way to preprocess.
        from unittest import mock

        from trtx_bridge.standin_lowering.backend import TensorRTBackend

        ep = _export(Decode(), torch.randn(1, 1, 8), torch.tensor([0]))
        copied = TensorRTBackend.copy_exported_program_for_preprocess(ep, [])
        self.assertIsNot(copied.graph_module, ep.graph_module)
        self.assertIsNot(copied.state_dict, ep.state_dict)
        for fqn, tensor in ep.state_dict.items():
            self.assertIs(copied.state_dict[fqn], tensor, fqn)
        seen = []
        original = TensorRTBackend.copy_exported_program_for_preprocess.__func__

        def spy(cls, program, specs):
            out = original(cls, program, specs)
            seen.append(all(out.state_dict[k] is v for k, v in program.state_dict.items()))
            return out

        with mock.patch.object(TensorRTBackend, "copy_exported_program_for_preprocess", classmethod(spy)), torch.no_grad():
            lower({"forward": ep})
        self.assertEqual(seen, [True])

    def test_a_weight_two_engines_use_is_one_named_data_entry(self):
        # A tied weight used on both sides of an op left to ExecuTorch (two
        # partitions), and the same model in a second method: each engine
        # names the weight, the outer program holds it once.
        class Tied(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.randn(16, 16))

            def forward(self, x):
                return torch.tanh(x @ self.w) @ self.w.t()

        model = Tied()
        ep = _export(model, torch.randn(2, 16))
        options = {"torch_executed_ops": ["torch.ops.aten.tanh.default"], "min_block_size": 1}
        with torch.no_grad():
            edge = lower({"forward": ep, "twice": _export(model, torch.randn(2, 16))}, options={"forward": options, "twice": options})
        engines = _engines(edge) + _engines(edge, "twice")
        self.assertEqual(len(engines), 4)
        for _, engine in engines:
            external, _ = _constants(_read_engine(engine)["program"])
            self.assertEqual(sorted(external), ["w"])
        from executorch.exir._serialize._program import deserialize_pte_binary

        with torch.no_grad():
            outer = deserialize_pte_binary(bytes(edge.to_executorch(executorch_config()).buffer))
        self.assertEqual(list(outer.named_data.pte_data), ["w"])
        self.assertEqual(len(outer.named_data.buffers), 1)
        self.assertEqual(len(outer.named_data.buffers[0]), 16 * 16 * 4)

    def test_methods_holding_different_weights_under_one_name_are_refused_naming_it(self):
        # The outer program keeps one named-data entry per FQN: two methods
        # from two differently initialised modules cannot share it.
        from trtx_bridge.errors import BridgeError
        from trtx_bridge.sources import MethodSource
        from trtx_bridge.standin_export import lower_sources

        class Channel:
            def warning(self, message, code=None):
                pass

        class Request:
            budget_bytes = None

        eps = {name: _export(nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8)), torch.randn(1, 8)) for name in ("a", "b")}
        sources = [MethodSource(name, exported_program=ep) for name, ep in eps.items()]
        with self.assertRaises(BridgeError) as raised, torch.no_grad():
            lower_sources(sources, eps, Request(), Channel())
        self.assertEqual(raised.exception.type, "LOWER")
        self.assertIn("the methods hold different weights under one name", raised.exception.message)
        self.assertIn("Duplicate key 0.weight", raised.exception.message)

    def test_an_operator_without_a_cpu_kernel_is_refused_at_export_by_name(self):
        class Erfinv(nn.Module):
            def forward(self, x):
                return torch.erfinv(torch.tanh(x * 2.0) * 0.5) + 1.0

        with self.assertRaises(StandinLoweringError) as raised, torch.no_grad():
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
