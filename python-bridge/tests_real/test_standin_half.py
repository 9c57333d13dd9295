"""Half-precision decoders through the reference lowering: a bfloat16 or
float16 model's engines run on ExecuTorch's CPU kernels (portable and
optimized, as the runner links them) and compute what eager PyTorch computes,
step after step with the caches fed back as the runner feeds them.

The corpus's Llama-style decoder (python-bridge/corpus/models.py) always
runs; transformers' own LlamaForCausalLM through its ExecuTorch wrapper (the
way python-bridge/zoo and bench_models export) runs where transformers is
importable (trtx's zoo folder, made by ``npm run zoo``).
"""

from __future__ import annotations

import copy
import operator
import os
import sys
import unittest

import torch
from test_standin_engine_v3 import _engines, _outer_named_data, _read_engine, _run_program
from torch.export.graph_signature import OutputKind
from trtx_bridge.standin_lowering import lower

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "corpus"))
sys.path.insert(0, os.path.join(_HERE, "..", "bench_models"))

# trtx verify's default tolerances per dtype (docs/reference-lowering.md §4).
TOLERANCE = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 5e-2}


def _transformers() -> bool:
    try:
        import llama_shapes

        llama_shapes._import_transformers()
        return True
    except ImportError:
        return False


def _engine_steps(edge, steps: list[dict[str, torch.Tensor]]) -> list[list[torch.Tensor]]:
    """Runs the method's one engine ``len(steps)`` times: inputs by binding
    name (user inputs from ``steps``, buffers as the program registers them),
    each buffer an engine output updates fed back as the next step's input --
    through the aliasing for a KV-cache update, through the outer program's
    buffer mutations for any other."""
    [(meta, engine)] = _engines(edge)
    program, named = _read_engine(engine)["program"], _outer_named_data(edge)
    ep = edge.exported_program()
    sig = ep.graph_signature
    state = {**ep.state_dict, **ep.constants}
    inputs = [b["name"] for b in meta["io_bindings"] if b["is_input"]]
    outputs = [b["name"] for b in meta["io_bindings"] if not b["is_input"]]
    feedback = {outputs.index(a["output"]): a["input"] for a in meta["aliased_io"]}
    placeholder_of = {fqn: name for name, fqn in sig.inputs_to_buffers.items()}
    nodes = {n.name: n for n in ep.graph_module.graph.nodes}
    for spec in sig.output_specs:
        node = nodes.get(spec.arg.name)
        if spec.kind == OutputKind.BUFFER_MUTATION and node is not None and node.target is operator.getitem:
            feedback[node.args[1]] = placeholder_of[spec.target]
    values = {name: state[sig.inputs_to_buffers[name]].clone() for name in inputs if name in sig.inputs_to_buffers}
    results = []
    for user in steps:
        values.update(user)
        out = _run_program(program, [values[name] for name in inputs], named)
        for index, name in feedback.items():
            values[name] = out[index]
        results.append(out)
    return results


class HalfPrecision(unittest.TestCase):
    def _check(self, got: torch.Tensor, want: torch.Tensor, dtype: torch.dtype, what: str) -> None:
        self.assertEqual(got.dtype, dtype, what)
        tol = TOLERANCE[dtype]
        torch.testing.assert_close(got.float(), want.float(), atol=tol, rtol=tol, msg=what)

    def test_a_half_precision_llama_block_runs_on_executorchs_kernels_as_in_eager(self):
        from models import DIM, TinyLlama

        for dtype in (torch.bfloat16, torch.float16):
            with self.subTest(dtype=dtype):
                torch.manual_seed(0)
                model = TinyLlama().to(dtype).eval()
                eager = copy.deepcopy(model)
                xs = [torch.randn(1, 1, DIM).to(dtype) for _ in range(4)]
                ep = torch.export.export(model, (xs[0], torch.tensor([0])))
                with torch.no_grad():
                    edge = lower({"forward": ep})
                runs = _engine_steps(edge, [{"x": x, "input_pos": torch.tensor([s])} for s, x in enumerate(xs)])
                for s, (x, out) in enumerate(zip(xs, runs)):
                    with torch.no_grad():
                        want = eager(x, torch.tensor([s]))
                    logits = next(o for o in out if tuple(o.shape) == tuple(want.shape))
                    self._check(logits, want, dtype, f"{dtype} step {s}")

    @unittest.skipUnless(_transformers(), "transformers is not importable (npm run zoo installs it)")
    def test_transformers_llama_in_bfloat16_and_float16_runs_as_in_eager(self):
        import llama_shapes

        llama_shapes.SHAPES["test-tiny"] = {
            **llama_shapes.SHAPES["ci"],
            "vocab_size": 128,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 8,
        }
        for dtype in ("bfloat16", "float16"):
            with self.subTest(dtype=dtype):
                ep = llama_shapes.export_decode_step("test-tiny", dtype, max_cache=16)
                # The eager module first: lowering takes the rotary buffer out of the program it is given.
                eager = copy.deepcopy(ep).module()
                with torch.no_grad():
                    edge = lower({"forward": ep})
                tokens = [5, 17, 3, 99]
                steps = [{"input_ids": torch.tensor([[t]]), "cache_position": torch.tensor([s])} for s, t in enumerate(tokens)]
                runs = _engine_steps(edge, steps)
                for s, (step, out) in enumerate(zip(steps, runs)):
                    with torch.no_grad():
                        want = eager(**step)
                    logits = next(o for o in out if tuple(o.shape) == tuple(want.shape))
                    self._check(logits, want, getattr(torch, dtype), f"{dtype} step {s}")


if __name__ == "__main__":
    unittest.main()
