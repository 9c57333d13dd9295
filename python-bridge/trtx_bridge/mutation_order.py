"""Put the mutations that still get a copy-back first, before finalization.

Why: ExecuTorch's ``insert_write_back_for_buffers_pass`` (run inside
``to_executorch``) inserts an ``aten::copy_`` only for a mutation whose value
is not already its own buffer, builds the new output tuple as
``[those copies] + [every other output, in graph order]``, and then renames
each mutation spec by walking ONE counter over that tuple. That pairing is only
right when every copy-producing mutation comes before every copy-free one.

A zero-copy KV cache (``export(..., zero_copy_kv=True)``) is copy-free: its
mutation value is rewired to the buffer placeholder itself. A method that holds
such a cache beside an ordinary copy-back buffer (a convolution state returned
by the engine) therefore finalizes with a crossed mutation map -- the cache
names the copy that writes the conv state, and so on -- unless the copy-back
mutations are moved to the front first (``order_copyback_mutations_first`` in
pytorch/TensorRT#4667's ``_zero_copy.py`` makes the same repair).

Where: on the Edge program (``EdgeProgramManager.exported_program(name)``), not
earlier. ``to_edge_transform_and_lower`` re-derives the signature, so an order
set on the pre-Edge program is lost.

What is decided: "gets a copy" is asked of upstream's own predicate,
``executorch.exir.passes.insert_write_back_for_buffers_pass._inplace_lineage``,
so this pass and the write-back agree by construction. When that private name is
absent, a stand-in with the same rule is used and the caller is told.

Limit: ``run_reinplace_pass`` / ``reinplace_extra_ops`` in the backend config
run inside ``to_executorch`` after this reorder and can turn an ordinary
mutation copy-free again; nothing can be done about that from outside. trtx
finalizes with ExecuTorch's default config, where both are off.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable

from .signature import kind_name

MUTATION_KINDS = ("BUFFER_MUTATION", "USER_INPUT_MUTATION")

Lineage = Callable[[Any, Any, Any], bool]


def _fallback_is_inplace_node(node: Any) -> bool:
    # ExecuTorch asks torchgen whether the schema is an in-place variant; the
    # naming rule behind that: a base name ending in one underscore ("add_",
    # "index_copy_"), not a dunder.
    if getattr(node, "op", None) != "call_function":
        return False
    schema = getattr(getattr(node, "target", None), "_schema", None)
    name = getattr(schema, "name", None)
    if not isinstance(name, str):
        return False
    base = name.split("::")[-1]
    return base.endswith("_") and not base.endswith("__")


def fallback_inplace_lineage(value: Any, signature: Any, kind: Any) -> bool:
    """True when ``value`` is, through in-place ops only, the input it mutates."""
    kname = kind_name(kind)
    if kname not in MUTATION_KINDS:
        return False
    node = value
    for _ in range(10_000):  # a graph is acyclic; the bound only guards a broken one
        if getattr(node, "op", None) == "placeholder":
            break
        if not _fallback_is_inplace_node(node) or not getattr(node, "args", None):
            return False
        node = node.args[0]
    else:
        return False
    target = getattr(node, "target", None)
    if kname == "BUFFER_MUTATION":
        return target in signature.inputs_to_buffers
    return target in signature.user_inputs


def resolve_lineage() -> tuple[Lineage, str]:
    """Upstream's predicate when importable, else the stand-in; and which."""
    try:
        from executorch.exir.passes.insert_write_back_for_buffers_pass import _inplace_lineage
    except Exception:  # noqa: BLE001 - absent, renamed, or executorch missing entirely
        return fallback_inplace_lineage, "trtx"
    return _inplace_lineage, "executorch"


def output_node(graph: Any) -> Any:
    finder = getattr(graph, "output_node", None)
    if callable(finder):
        return finder()
    for node in reversed(list(graph.nodes)):
        if node.op == "output":
            return node
    raise ValueError("graph has no output node")


@dataclass
class CopybackOrderPlan:
    """What ``order_copyback_mutations_first`` would do to one program."""

    slots: list[int]  # output positions that hold a mutation spec, ascending
    order: list[int]  # original position to place in each slot, same length
    copy_back: list[str]  # mutation targets that get a copy, in new order
    in_place: list[str]  # mutation targets that get none, in new order
    moved: int  # slots whose value changes
    residual: list[str] = field(default_factory=list)  # reasons the pairing stays crossed


def _outputs_and_specs(program: Any) -> tuple[Any, list[Any], list[Any]]:
    graph = program.graph_module.graph
    out = output_node(graph)
    values = list(out.args[0])
    specs = list(program.graph_signature.output_specs)
    if len(values) != len(specs):
        raise ValueError(
            f"graph returns {len(values)} values but the signature lists {len(specs)} outputs; the mutation order cannot be paired"
        )
    return out, values, specs


def plan_copyback_order(program: Any, lineage: Lineage | None = None) -> CopybackOrderPlan:
    is_inplace = lineage or resolve_lineage()[0]
    _, values, specs = _outputs_and_specs(program)
    signature = program.graph_signature
    slots = [i for i, spec in enumerate(specs) if kind_name(spec.kind) in MUTATION_KINDS]
    copy_slots: list[int] = []
    inplace_slots: list[int] = []
    for i in slots:
        if is_inplace(values[i], signature, specs[i].kind):
            inplace_slots.append(i)
        else:
            copy_slots.append(i)
    # Stable within each group: the write-back keeps graph order inside both
    # the copy prefix and the tail, so the groups' own order must not change.
    order = copy_slots + inplace_slots
    moved = sum(1 for slot, src in zip(slots, order) if slot != src)
    residual: list[str] = []
    # The copy-free mutations pair with the head of the tail, which is every
    # non-copy output in graph order. Any non-mutation output before the last
    # mutation slot (an effect token, say) sits in that head and shifts them.
    if inplace_slots:
        last = slots[-1]
        for i, spec in enumerate(specs[:last]):
            if i not in slots:
                residual.append(
                    f"output {i} ({kind_name(spec.kind)}) precedes a mutation, so the write-back still "
                    "pairs copy-free mutations with the wrong value"
                )
    return CopybackOrderPlan(
        slots=slots,
        order=order,
        copy_back=[specs[i].target for i in copy_slots],
        in_place=[specs[i].target for i in inplace_slots],
        moved=moved,
        residual=residual,
    )


def apply_copyback_order(program: Any, plan: CopybackOrderPlan) -> int:
    """Carry out a plan from ``plan_copyback_order`` on the same program."""
    if plan.moved == 0:
        return 0
    out, values, specs = _outputs_and_specs(program)
    new_values = list(values)
    new_specs = list(specs)
    for slot, src in zip(plan.slots, plan.order):
        new_values[slot] = values[src]
        new_specs[slot] = specs[src]
    original = out.args[0]
    container = type(original) if isinstance(original, (list, tuple)) else tuple
    out.args = (container(new_values),) + tuple(out.args[1:])
    signature = program.graph_signature
    try:
        signature.output_specs[:] = new_specs
    except TypeError:
        # Not a list (a tuple in some torch build): rebuild the signature of
        # the same type. ExportedProgram keeps it in _graph_signature.
        program._graph_signature = type(signature)(input_specs=list(signature.input_specs), output_specs=new_specs)
    recompile = getattr(program.graph_module, "recompile", None)
    if callable(recompile):
        recompile()
    return plan.moved


def order_copyback_mutations_first(program: Any, lineage: Lineage | None = None) -> int:
    """Reorder one Edge program's mutation outputs in place; return how many moved.

    The output node's values and ``graph_signature.output_specs`` are permuted
    together, so every spec still names its own value. Non-mutation outputs keep
    their positions. Returns the number of output slots whose value changed (0
    when the program is already in order, and then nothing is touched).
    """
    return apply_copyback_order(program, plan_copyback_order(program, lineage))


def _is_copy(node: Any) -> bool:
    target = getattr(node, "target", None)
    schema = getattr(target, "_schema", None)
    name = getattr(schema, "name", None)
    if isinstance(name, str):
        return name == "aten::copy_"
    return str(target).startswith("aten.copy_")


def crossed_mutations(program: Any) -> list[str]:
    """Check a FINALIZED program's mutation map against its graph.

    After ``to_executorch`` every BUFFER_MUTATION spec names either an
    ``aten::copy_`` (whose destination is a buffer placeholder) or, for a
    copy-free one, the buffer placeholder itself. Either way the buffer reached
    must be the spec's own target; a list of every spec where it is not.
    """
    signature = program.graph_signature
    by_name = {node.name: node for node in program.graph_module.graph.nodes}
    buffers = dict(signature.inputs_to_buffers)
    problems: list[str] = []
    for spec in signature.output_specs:
        if kind_name(spec.kind) != "BUFFER_MUTATION":
            continue
        value = by_name.get(getattr(spec.arg, "name", None))
        if value is None:
            problems.append(f"{spec.target}: names a value not in the graph")
            continue
        dest = value.args[0] if _is_copy(value) and value.args else value
        if getattr(dest, "op", None) != "placeholder":
            problems.append(f"{spec.target}: names {value.name}, which writes no buffer")
            continue
        reached = buffers.get(dest.name)
        if reached != spec.target:
            problems.append(f"{spec.target}: names {value.name}, which writes {reached}")
    return problems


def predicted_crossings(edge_program: Any) -> list[str]:
    """The mutation map ``to_executorch`` will give an Edge program, checked.

    Runs ExecuTorch's own ``insert_write_back_for_buffers_pass`` on a copy
    and checks the pairing it returns. The pass
    (exir/passes/insert_write_back_for_buffers_pass.py) reads only
    ``ep.graph_module`` and ``ep.graph_signature``, rewrites the graph and
    renames the signature's specs in place, so it gets a copy of just those
    two: a new GraphModule over a copied graph (its attributes -- delegate
    modules, constants -- are shared, not copied, and the pass only reads
    them) and a copied signature, not a deep copy of the whole program. The finalized program cannot be
    checked by name instead: the passes after the write-back (device copies,
    out-variants, memory planning) rename graph nodes but not the signature,
    which then names nodes that no longer exist (``copy__default`` for a node
    now called ``copy_``) in ExecuTorch 1.5.
    """
    import torch.fx
    from executorch.exir.passes.insert_write_back_for_buffers_pass import insert_write_back_for_buffers_pass

    source = edge_program.graph_module
    program = SimpleNamespace(
        graph_module=torch.fx.GraphModule(source, copy.deepcopy(source.graph)),
        graph_signature=copy.deepcopy(edge_program.graph_signature),
    )
    gm, signature = insert_write_back_for_buffers_pass(program)
    return crossed_mutations(SimpleNamespace(graph_module=gm, graph_signature=signature))
