"""order_copyback_mutations_first on hand-built graphs and signatures (no torch).

The stand-ins below carry only what the pass reads: nodes with op / name /
target / args, a graph with an output node, and a signature whose specs have a
``kind`` with a ``name``. ``write_back`` reproduces the pairing rule of
ExecuTorch's insert_write_back_for_buffers_pass, which is the behaviour the
reorder exists for.
"""

from __future__ import annotations

import enum
import sys
import types
import unittest
from dataclasses import dataclass
from typing import Any

from trtx_bridge import mutation_order
from trtx_bridge.mutation_order import (
    crossed_mutations,
    fallback_inplace_lineage,
    order_copyback_mutations_first,
    plan_copyback_order,
    resolve_lineage,
)


class Out(enum.Enum):
    USER_OUTPUT = 1
    BUFFER_MUTATION = 2
    USER_INPUT_MUTATION = 3
    TOKEN = 4


class In(enum.Enum):
    USER_INPUT = 1
    BUFFER = 2


class Target:
    def __init__(self, name: str):
        self._schema = types.SimpleNamespace(name=name, overload_name="default")

    def __str__(self) -> str:
        return self._schema.name.replace("::", ".") + ".default"


COPY = Target("aten::copy_")
ADD_ = Target("aten::add_")
ADD = Target("aten::add")
DELEGATE = Target("higher_order::executorch_call_delegate")


class Node:
    def __init__(self, name: str, op: str = "call_function", target: Any = None, args: tuple = ()):
        self.name = name
        self.op = op
        self.target = name if target is None else target
        self.args = args


@dataclass
class Arg:
    name: str


@dataclass
class Spec:
    kind: Any
    arg: Arg
    target: str | None


class Signature:
    def __init__(self, input_specs: list[Spec], output_specs: list[Spec]):
        self.input_specs = input_specs
        self.output_specs = output_specs

    @property
    def inputs_to_buffers(self):
        return {s.arg.name: s.target for s in self.input_specs if s.kind == In.BUFFER}

    @property
    def user_inputs(self):
        return [s.arg.name for s in self.input_specs if s.kind == In.USER_INPUT]


class Graph:
    def __init__(self, nodes: list[Node]):
        self.nodes = nodes

    def output_node(self) -> Node:
        return [n for n in self.nodes if n.op == "output"][-1]


class GraphModule:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.recompiles = 0

    def recompile(self) -> None:
        self.recompiles += 1


class Program:
    def __init__(self, graph: Graph, signature: Signature):
        self.graph_module = GraphModule(graph)
        self._graph_signature = signature

    @property
    def graph_signature(self) -> Signature:
        return self._graph_signature


def kv_program(zero_copy: bool = True, extra_first: Spec | None = None) -> Program:
    """k/v caches an engine writes in place, and a conv state copied back.

    Output order k, v, conv: what the Edge program has after
    to_edge_transform_and_lower in the program pytorch/TensorRT#4667 measured.
    """
    k, v, conv, x = (Node(n, "placeholder") for n in ("b_k", "b_v", "b_conv", "x"))
    delegate = Node("delegate", target=DELEGATE, args=(x, k, v, conv))
    items = [Node(f"getitem_{i}", target="getitem", args=(delegate, i)) for i in range(4)]
    k_val, v_val = (k, v) if zero_copy else (items[0], items[1])
    values = [k_val, v_val, items[2], items[3]]
    specs = [
        Spec(Out.BUFFER_MUTATION, Arg(k_val.name), "k_cache"),
        Spec(Out.BUFFER_MUTATION, Arg(v_val.name), "v_cache"),
        Spec(Out.BUFFER_MUTATION, Arg(items[2].name), "conv_state"),
        Spec(Out.USER_OUTPUT, Arg(items[3].name), None),
    ]
    nodes = [k, v, conv, x, delegate, *items]
    if extra_first is not None:
        token = Node(extra_first.arg.name, "placeholder")
        nodes.append(token)
        values.insert(0, token)
        specs.insert(0, extra_first)
    nodes.append(Node("output", "output", args=(tuple(values),)))
    signature = Signature(
        [
            Spec(In.BUFFER, Arg("b_k"), "k_cache"),
            Spec(In.BUFFER, Arg("b_v"), "v_cache"),
            Spec(In.BUFFER, Arg("b_conv"), "conv_state"),
            Spec(In.USER_INPUT, Arg("x"), None),
        ],
        specs,
    )
    return Program(Graph(nodes), signature)


def write_back(program: Program) -> Program:
    """The write-back's pairing: copies first, then every other output in graph
    order, one counter over the mutation specs."""
    graph = program.graph_module.graph
    signature = program.graph_signature
    values = list(graph.output_node().args[0])
    placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    by_target = {s.target: placeholders[s.arg.name] for s in signature.input_specs if s.target}
    copies, tail = [], []
    for value, spec in zip(values, signature.output_specs):
        mutation = spec.kind.name in ("BUFFER_MUTATION", "USER_INPUT_MUTATION")
        if mutation and not fallback_inplace_lineage(value, signature, spec.kind):
            copies.append(Node(f"copy_{len(copies)}", target=COPY, args=(by_target[spec.target], value)))
        else:
            tail.append(value)
    new_values = copies + tail
    specs = [Spec(s.kind, Arg(s.arg.name), s.target) for s in signature.output_specs]
    counter = 0
    for spec in specs:
        if spec.kind.name in ("BUFFER_MUTATION", "USER_INPUT_MUTATION"):
            spec.arg.name = new_values[counter].name
            counter += 1
    nodes = [n for n in graph.nodes if n.op != "output"] + copies
    nodes.append(Node("output", "output", args=(tuple(new_values),)))
    return Program(Graph(nodes), Signature(signature.input_specs, specs))


def order(program: Program) -> list[str]:
    return [s.target or s.arg.name for s in program.graph_signature.output_specs]


class OrderCopybackMutationsFirst(unittest.TestCase):
    def test_moves_copyback_ahead_of_inplace_and_keeps_values_with_specs(self):
        program = kv_program(zero_copy=True)
        moved = order_copyback_mutations_first(program, fallback_inplace_lineage)
        self.assertEqual(moved, 3)
        self.assertEqual(order(program), ["conv_state", "k_cache", "v_cache", "getitem_3"])
        values = [n.name for n in program.graph_module.graph.output_node().args[0]]
        self.assertEqual(values, ["getitem_2", "b_k", "b_v", "getitem_3"])
        self.assertEqual([s.arg.name for s in program.graph_signature.output_specs], values)
        self.assertEqual(program.graph_module.recompiles, 1)

    def test_without_the_reorder_the_write_back_crosses_the_map(self):
        final = write_back(kv_program(zero_copy=True))
        self.assertTrue(crossed_mutations(final))

    def test_after_the_reorder_the_write_back_pairs_every_buffer_with_itself(self):
        program = kv_program(zero_copy=True)
        order_copyback_mutations_first(program, fallback_inplace_lineage)
        final = write_back(program)
        self.assertEqual(crossed_mutations(final), [])
        mutated = {s.arg.name: s.target for s in final.graph_signature.output_specs if s.target}
        self.assertEqual(mutated, {"copy_0": "conv_state", "b_k": "k_cache", "b_v": "v_cache"})

    def test_already_ordered_is_left_alone(self):
        program = kv_program(zero_copy=True)
        order_copyback_mutations_first(program, fallback_inplace_lineage)
        before = order(program)
        self.assertEqual(order_copyback_mutations_first(program, fallback_inplace_lineage), 0)
        self.assertEqual(order(program), before)
        self.assertEqual(program.graph_module.recompiles, 1)

    def test_all_copyback_is_left_alone(self):
        program = kv_program(zero_copy=False)
        self.assertEqual(order_copyback_mutations_first(program, fallback_inplace_lineage), 0)
        self.assertEqual(order(program), ["k_cache", "v_cache", "conv_state", "getitem_3"])
        self.assertEqual(crossed_mutations(write_back(program)), [])

    def test_order_within_each_group_is_stable(self):
        program = kv_program(zero_copy=True)
        plan = plan_copyback_order(program, fallback_inplace_lineage)
        self.assertEqual(plan.copy_back, ["conv_state"])
        self.assertEqual(plan.in_place, ["k_cache", "v_cache"])
        self.assertEqual(plan.slots, [0, 1, 2])
        self.assertEqual(plan.order, [2, 0, 1])

    def test_user_input_mutations_count_as_mutations(self):
        x = Node("x", "placeholder")
        b = Node("b_s", "placeholder")
        produced = Node("add", target=ADD, args=(x,))
        out = Node("output", "output", args=((x, produced, produced),))
        signature = Signature(
            [Spec(In.USER_INPUT, Arg("x"), None), Spec(In.BUFFER, Arg("b_s"), "s")],
            [
                Spec(Out.USER_INPUT_MUTATION, Arg("x"), "x"),
                Spec(Out.BUFFER_MUTATION, Arg("add"), "s"),
                Spec(Out.USER_OUTPUT, Arg("add"), None),
            ],
        )
        program = Program(Graph([x, b, produced, out]), signature)
        self.assertEqual(order_copyback_mutations_first(program, fallback_inplace_lineage), 2)
        self.assertEqual([s.kind for s in program.graph_signature.output_specs][:2], [Out.BUFFER_MUTATION, Out.USER_INPUT_MUTATION])

    def test_a_non_mutation_output_ahead_of_the_mutations_is_reported(self):
        program = kv_program(zero_copy=True, extra_first=Spec(Out.TOKEN, Arg("token"), None))
        plan = plan_copyback_order(program, fallback_inplace_lineage)
        self.assertEqual(len(plan.residual), 1)
        self.assertIn("TOKEN", plan.residual[0])
        self.assertEqual(plan_copyback_order(kv_program(zero_copy=True), fallback_inplace_lineage).residual, [])

    def test_graph_and_signature_of_different_lengths_is_refused(self):
        program = kv_program(zero_copy=True)
        program.graph_signature.output_specs.pop()
        with self.assertRaises(ValueError):
            order_copyback_mutations_first(program, fallback_inplace_lineage)

    def test_a_signature_with_a_tuple_of_specs_is_rebuilt(self):
        program = kv_program(zero_copy=True)
        program.graph_signature.output_specs = tuple(program.graph_signature.output_specs)
        order_copyback_mutations_first(program, fallback_inplace_lineage)
        self.assertEqual(order(program)[0], "conv_state")


class Lineage(unittest.TestCase):
    def setUp(self):
        self.signature = Signature(
            [Spec(In.BUFFER, Arg("b"), "buf"), Spec(In.USER_INPUT, Arg("x"), None)],
            [],
        )
        self.b = Node("b", "placeholder")
        self.x = Node("x", "placeholder")

    def test_the_buffer_itself_is_in_place(self):
        self.assertTrue(fallback_inplace_lineage(self.b, self.signature, Out.BUFFER_MUTATION))

    def test_a_chain_of_in_place_ops_is_in_place(self):
        chained = Node("add__1", target=ADD_, args=(Node("add_", target=ADD_, args=(self.b, 1)), 2))
        self.assertTrue(fallback_inplace_lineage(chained, self.signature, Out.BUFFER_MUTATION))

    def test_a_functional_op_needs_a_copy(self):
        self.assertFalse(fallback_inplace_lineage(Node("add", target=ADD, args=(self.b,)), self.signature, Out.BUFFER_MUTATION))

    def test_a_user_input_is_not_a_buffer(self):
        self.assertFalse(fallback_inplace_lineage(self.x, self.signature, Out.BUFFER_MUTATION))
        self.assertTrue(fallback_inplace_lineage(self.x, self.signature, Out.USER_INPUT_MUTATION))

    def test_a_user_output_is_never_in_place(self):
        self.assertFalse(fallback_inplace_lineage(self.b, self.signature, Out.USER_OUTPUT))


class ResolveLineage(unittest.TestCase):
    MODULE = "executorch.exir.passes.insert_write_back_for_buffers_pass"

    def tearDown(self):
        for name in ("executorch", "executorch.exir", "executorch.exir.passes", self.MODULE):
            sys.modules.pop(name, None)

    def test_upstream_predicate_is_preferred_when_importable(self):
        calls = []

        def upstream(value, signature, kind):
            calls.append(value.name)
            return value.op == "placeholder"

        for name in ("executorch", "executorch.exir", "executorch.exir.passes"):
            sys.modules[name] = types.ModuleType(name)
        module = types.ModuleType(self.MODULE)
        module._inplace_lineage = upstream
        sys.modules[self.MODULE] = module
        predicate, which = resolve_lineage()
        self.assertIs(predicate, upstream)
        self.assertEqual(which, "executorch")
        order_copyback_mutations_first(kv_program(zero_copy=True))
        self.assertEqual(calls, ["b_k", "b_v", "getitem_2"])

    def test_stand_in_when_executorch_is_absent(self):
        sys.modules["executorch"] = None  # makes the import fail like a missing package
        predicate, which = resolve_lineage()
        self.assertIs(predicate, mutation_order.fallback_inplace_lineage)
        self.assertEqual(which, "trtx")


class CrossedMutations(unittest.TestCase):
    def test_a_copy_into_another_buffer_is_named(self):
        program = kv_program(zero_copy=True)
        final = write_back(program)
        problems = crossed_mutations(final)
        self.assertEqual(len(problems), 3)
        self.assertTrue(problems[0].startswith("k_cache: names copy_0, which writes conv_state"))


if __name__ == "__main__":
    unittest.main()
