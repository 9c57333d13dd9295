"""TEST DOUBLE of executorch.exir. See ../../README.md."""

import copy
import os
from dataclasses import dataclass, field
from typing import Any

from _trtx_double import COPY_, Graph, GraphModule, Node, fault, mutation_order, record


@dataclass
class EdgeCompileConfig:
    _check_ir_validity: bool = True


@dataclass
class ExecutorchBackendConfig:
    passes: list[Any] = field(default_factory=list)
    to_out_var_pass: Any = "ToOutVarPass"
    run_reinplace_pass: bool = False
    enable_non_cpu_memory_planning: bool = True
    emit_mutable_buffer_names: bool = False

    def _double_summary(self):
        return {"to_out_var_pass": self.to_out_var_pass, "run_reinplace_pass": self.run_reinplace_pass}


def _write_back(program):
    """What upstream's insert_write_back_for_buffers_pass does to the signature.

    A copy_ for every mutation whose value is not its own buffer, the output
    tuple rebuilt as copies + the other outputs in graph order, and every
    mutation spec renamed by one counter over that tuple. Reproduced so a
    program finalized without trtx's reordering comes out crossed, as it does
    upstream.
    """
    from torch.export import ExportedProgram

    from executorch.exir.passes.insert_write_back_for_buffers_pass import _lineage_rule

    signature = program.graph_signature
    graph = program.graph_module.graph
    output = graph.output_node()
    values = list(output.args[0])
    placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    by_target = {s.target: placeholders[s.arg.name] for s in signature.input_specs if s.target}
    specs = copy.deepcopy(signature.output_specs)
    copies, tail, made = [], [], []
    for value, spec in zip(values, specs):
        is_mutation = spec.kind.name in ("BUFFER_MUTATION", "USER_INPUT_MUTATION")
        if is_mutation and not _lineage_rule(value, signature, spec.kind):
            suffix = "" if not copies else f"_{len(copies)}"
            node = Node(f"copy__default{suffix}", "call_function", COPY_, (by_target[spec.target], value))
            copies.append(node)
            made.append(node)
        else:
            tail.append(value)
    new_values = copies + tail
    counter = 0
    for spec in specs:
        if spec.kind.name in ("BUFFER_MUTATION", "USER_INPUT_MUTATION"):
            spec.arg.name = new_values[counter].name
            counter += 1
    nodes = [n for n in graph.nodes if n.op != "output"] + made
    nodes.append(Node("output", "output", "output", (tuple(new_values),)))
    final_signature = type(signature)(input_specs=list(signature.input_specs), output_specs=specs)
    return ExportedProgram(
        GraphModule(Graph(nodes), program.graph_module.label + ":final"), final_signature, origin=program.origin + ":final"
    )


class ExecutorchProgramManager:
    def __init__(self, programs, config):
        self._programs = programs
        self.config = config

    @property
    def methods(self):
        return set(self._programs)

    def exported_program(self, method_name="forward"):
        return self._programs[method_name]

    def _bytes(self):
        path = os.environ.get("TRTX_DOUBLE_PROGRAM")
        if not path:
            raise RuntimeError("double: TRTX_DOUBLE_PROGRAM names no .pte to write")
        with open(path, "rb") as handle:
            return handle.read()

    @property
    def buffer(self):
        record("executorch.exir.ExecutorchProgramManager.buffer")
        return self._bytes()

    def write_to_file(self, open_file):
        # The file's inode, so a test can tell the file trtx publishes is this
        # one renamed, not a copy (issue 28).
        record("executorch.exir.ExecutorchProgramManager.write_to_file", inode=str(os.fstat(open_file.fileno()).st_ino))
        fault("write")
        open_file.write(self._bytes())


class EdgeProgramManager:
    def __init__(self, programs):
        self._programs = dict(programs)

    @property
    def methods(self):
        return set(self._programs)

    def exported_program(self, method_name="forward"):
        return self._programs[method_name]

    def to_executorch(self, config=None):
        config = config if config is not None else ExecutorchBackendConfig()
        record(
            "executorch.exir.EdgeProgramManager.to_executorch",
            config=config,
            mutation_order={name: mutation_order(p) for name, p in sorted(self._programs.items())},
        )
        fault("finalize")
        return ExecutorchProgramManager({n: _write_back(p) for n, p in self._programs.items()}, config)
