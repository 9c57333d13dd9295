"""Reference outputs (docs/reference-lowering.md §2) and the export a user
makes the documented way, through the bridge's own pipeline.

Needs torch and executorch (trtx's managed environment); run with
``PYTHONPATH=python-bridge python -m unittest discover -s python-bridge/tests_real``.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
import unittest

import torch
from torch import nn
from trtx_bridge.pipeline import run
from trtx_bridge.reference_outputs import _eager_module, run_eager, step_input
from trtx_bridge.request import ReferenceRequest, Request


class Cache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(1, 2, 8, 4))
        self.proj = nn.Linear(8, 8)

    def forward(self, x, input_pos):
        self.cache.index_copy_(2, input_pos, self.proj(x).view(1, 2, 1, 4))
        return self.cache.sum(dim=(1, 3))


class Reader(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(1, 2, 8, 4))

    def forward(self, x):
        return self.cache.sum(dim=(1, 3)) + x


class Channel:
    def __init__(self):
        self.warnings: list[tuple[str, str | None]] = []

    def progress(self, stage, fraction, message=None):
        pass

    def warning(self, message, code=None):
        self.warnings.append((message, code))


def _tensor(value: dict) -> torch.Tensor:
    dtype = getattr(torch, value["dtype"])
    return torch.frombuffer(bytearray(base64.b64decode(value["data"])), dtype=dtype).reshape(value["shape"])


class StepInputs(unittest.TestCase):
    def test_the_runners_pattern(self):
        ep = torch.export.export(Reader(), (torch.zeros(1, 8),))
        f = step_input(torch.empty(2, 3), 2, ep)
        self.assertEqual(f.flatten().tolist(), [((7 * 2 + 13 * k) % 29 - 14) / 16 for k in range(6)])
        self.assertEqual(step_input(torch.empty(1, dtype=torch.int64), 4, ep).tolist(), [4])
        self.assertEqual(step_input(torch.empty(3, dtype=torch.int32), 1, ep).tolist(), [1, 2, 3])
        self.assertEqual(step_input(torch.empty(3, dtype=torch.bool), 1, ep).tolist(), [True, False, True])
        self.assertEqual(step_input(torch.empty(2, dtype=torch.bfloat16), 0, ep).dtype, torch.bfloat16)
        self.assertEqual(step_input(7, 3, ep), 3)


class Eager(unittest.TestCase):
    def test_state_persists_across_steps_and_methods_share_it_only_when_asked(self):
        torch.manual_seed(0)
        programs = {
            "write": torch.export.export(Cache().eval(), (torch.zeros(1, 8), torch.tensor([0]))),
            "read": torch.export.export(Reader().eval(), (torch.zeros(1, 8),)),
        }
        apart = {m["name"]: m for m in run_eager(programs, 3)}
        shared = {m["name"]: m for m in run_eager(programs, 3, share_mutable_buffers=True)}
        self.assertEqual(list(apart), ["read", "write"])  # program order: ExecuTorch sorts methods by name

        # Apart, read sees its own (zero) cache; shared, it sees write's updates
        # of the steps before (read runs first within a step).
        def seen(method, step):  # read's output less its input: the cache it sees
            record = method["steps"][step]
            return (_tensor(record["outputs"][0]) - _tensor(record["inputs"][0])).abs().sum()

        self.assertTrue(all(seen(apart["read"], s) == 0 for s in range(3)))
        self.assertEqual(seen(shared["read"], 0), 0)
        self.assertGreater(seen(shared["read"], 2), 0)
        # write's cache keeps steps 0 and 1 when step 2 runs: its output grows with state.
        writes = [_tensor(s["outputs"][0]) for s in apart["write"]["steps"]]
        self.assertFalse(torch.equal(writes[1], writes[2]))
        self.assertEqual(
            apart["write"]["steps"][2]["inputs"][1],
            {"kind": "tensor", "dtype": "int64", "shape": [1], "data": base64.b64encode((2).to_bytes(8, "little")).decode()},
        )
        # The export is untouched by the eager run.
        self.assertEqual(programs["write"].state_dict["cache"].abs().sum(), 0)


class Pipeline(unittest.TestCase):
    def _export(self, module, inputs, steps=3):
        work = tempfile.mkdtemp(prefix="trtx-ref-")
        # The test run fails on anything left in its temp dir (test/global-temp-dir.ts).
        self.addCleanup(shutil.rmtree, work, ignore_errors=True)
        model = os.path.join(work, "model.pt2")
        # The documented way: eval(), torch.export.export, no torch.no_grad().
        torch.export.save(torch.export.export(module.eval(), inputs), model)
        ref = os.path.join(work, "ref.json")
        request = Request(
            model=model,
            output=os.path.join(work, "model.pte"),
            methods=None,
            budget_bytes=None,
            zero_copy_kv=False,
            allow_pickle=False,
            check_only=False,
            engine="reference",
            reference=ReferenceRequest(ref, steps, "model.pte"),
        )
        channel = Channel()
        return run(request, channel), channel, ref

    def test_the_eager_run_shares_the_weights_and_copies_the_buffers(self):
        # A real-size model's weights must not exist twice for the eager run;
        # its caches must not be the export's (the run writes them).
        ep = torch.export.export(Cache().eval(), (torch.randn(1, 1, 8), torch.tensor([0])))
        module = _eager_module(ep)
        params = dict(module.named_parameters())
        self.assertTrue(params)
        for fqn, p in params.items():
            self.assertEqual(p.data_ptr(), ep.state_dict[fqn].data_ptr(), fqn)
        for fqn, b in module.named_buffers():
            original = ep.state_dict.get(fqn, ep.constants.get(fqn))
            self.assertNotEqual(b.data_ptr(), original.data_ptr(), fqn)

    def test_a_model_exported_the_documented_way_lowers_and_gets_its_reference(self):
        model = Cache()
        self.assertTrue(all(p.requires_grad for p in model.parameters()))
        result, channel, ref = self._export(model, (torch.zeros(1, 8), torch.tensor([0])))
        self.assertEqual(result["reference"], ref)
        self.assertEqual(channel.warnings, [])
        with open(ref, encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(
            {k: doc[k] for k in ("schema", "model", "program", "steps", "inputs")},
            {"schema": "trtx.reference/1", "model": "model.pt2", "program": "model.pte", "steps": 3, "inputs": "trtx-step-v1"},
        )
        self.assertEqual(doc["producer"]["torch"], torch.__version__.split("+")[0])
        [method] = doc["methods"]
        self.assertEqual((method["name"], len(method["steps"])), ("forward", 3))
        self.assertEqual([o["shape"] for o in method["steps"][0]["outputs"]], [[1, 8]])

    def test_an_eager_failure_is_a_warning_and_no_file(self):
        # Ten steps write positions 0..9 of an 8-long cache: step 8 fails.
        result, channel, ref = self._export(Cache(), (torch.zeros(1, 8), torch.tensor([0])), steps=10)
        self.assertIsNone(result["reference"])
        self.assertFalse(os.path.exists(ref))
        self.assertEqual([code for _, code in channel.warnings], ["REFERENCE_EAGER_FAILED"])
        self.assertIn("method forward, step 8", channel.warnings[0][0])
        self.assertTrue(os.path.exists(result["program"]["path"]))


if __name__ == "__main__":
    unittest.main()
