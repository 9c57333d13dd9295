"""The copy-back ordering against ExecuTorch's real write-back pass.

Needs torch and executorch (trtx's managed environment); run with
``PYTHONPATH=python-bridge python -m unittest discover -s python-bridge/tests_real``
(``test/real-mutation-order.test.ts`` does).

The program is the corpus's ``kv-conv`` decode step, lowered by the reference
partitioner: one engine updates two KV caches (aliased) and returns a
convolution state that ExecuTorch copies back. Zero-copy KV (Torch-TensorRT
#4667, ``rewire_aliased_mutations_to_buffers``) points each cache's mutation
at its own buffer placeholder, so ``insert_write_back_for_buffers_pass``
inserts no copy for it -- and then pairs specs with values by one counter.
"""

from __future__ import annotations

import unittest

from corpus.models import CORPUS, export_methods
from trtx_bridge.mutation_order import order_copyback_mutations_first, plan_copyback_order, predicted_crossings
from trtx_bridge.standin_lowering import lower

KV_CONV = next(m for m in CORPUS if m.name == "kv-conv")
CACHES = ("attn.k_cache", "attn.v_cache")


def edge_program():
    edge = lower(export_methods(KV_CONV), options={"forward": {"min_block_size": 1}})
    return edge.exported_program("forward")


def rewire_caches(program) -> int:
    """What zero-copy KV does to the Edge program: each cache's mutation value becomes its buffer."""
    signature = program.graph_signature
    placeholders = {
        signature.inputs_to_buffers[n.name]: n for n in program.graph_module.graph.nodes if n.name in signature.inputs_to_buffers
    }
    output = program.graph_module.graph.output_node()
    values = list(output.args[0])
    rewired = 0
    for i, spec in enumerate(signature.output_specs):
        if spec.kind.name == "BUFFER_MUTATION" and spec.target in CACHES:
            values[i] = placeholders[spec.target]
            rewired += 1
    output.args = (tuple(values),)
    program.graph_module.recompile()
    return rewired


class RealWriteBack(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = edge_program()

    def fresh(self):
        import copy

        return copy.deepcopy(self.base)

    def test_the_program_has_the_shape_the_test_needs(self):
        # Caches first, the copy-back after: the order the write-back crosses.
        kinds = [(s.kind.name, s.target) for s in self.base.graph_signature.output_specs]
        self.assertEqual(
            kinds[:3], [("BUFFER_MUTATION", "attn.k_cache"), ("BUFFER_MUTATION", "attn.v_cache"), ("BUFFER_MUTATION", "conv.conv_state")]
        )

    def test_staged_program_pairs_correctly_and_needs_no_reorder(self):
        program = self.fresh()
        self.assertEqual(predicted_crossings(program), [])
        self.assertEqual(plan_copyback_order(program).moved, 0)

    def test_rewired_caches_cross_the_map_without_the_ordering(self):
        program = self.fresh()
        self.assertEqual(rewire_caches(program), 2)
        problems = predicted_crossings(program)
        # The real pass pairs the first cache with the conv state's copy, and so on.
        self.assertTrue(any(p.startswith("attn.k_cache:") and "conv.conv_state" in p for p in problems), problems)
        self.assertTrue(any(p.startswith("conv.conv_state:") for p in problems), problems)

    def test_predicting_leaves_the_program_as_it_was(self):
        # The write-back pass inserts copy_ nodes and renames the signature's
        # specs in place; the prediction must run it on a copy.
        program = self.fresh()
        rewire_caches(program)
        code = program.graph_module.code
        outputs = [(s.kind.name, s.arg.name, s.target) for s in program.graph_signature.output_specs]
        self.assertTrue(predicted_crossings(program))
        self.assertEqual(program.graph_module.code, code)
        self.assertEqual([(s.kind.name, s.arg.name, s.target) for s in program.graph_signature.output_specs], outputs)

    def test_ordering_copy_backs_first_makes_the_real_write_back_pair_correctly(self):
        program = self.fresh()
        rewire_caches(program)
        moved = order_copyback_mutations_first(program)
        self.assertGreater(moved, 0)
        self.assertEqual(predicted_crossings(program), [])
        targets = [s.target for s in program.graph_signature.output_specs if s.kind.name == "BUFFER_MUTATION"]
        self.assertEqual(targets, ["conv.conv_state", "attn.k_cache", "attn.v_cache"])


if __name__ == "__main__":
    unittest.main()
