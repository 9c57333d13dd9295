"""Shared machinery of trtx's TEST DOUBLES for torch / torch_tensorrt / executorch.

These packages are fakes. They exist so trtx's tests can drive the Python
bridge without PyTorch, Torch-TensorRT or ExecuTorch installed; they are put on
the bridge's PYTHONPATH by the tests only, never by trtx itself.

Environment knobs (all optional):
  TRTX_DOUBLE_CALLS     append one JSON line per recorded call to this file
  TRTX_DOUBLE_PROGRAM   the .pte whose bytes the fake finalized program writes
  TRTX_DOUBLE_MISSING   comma list of torch,torch_tensorrt,executorch to act missing
  TRTX_DOUBLE_FEATURES  comma list: no_zero_copy, no_budget, no_check, no_lineage
  TRTX_DOUBLE_FAULT     [stage:]mode[,mode...]; stage is load|compile|lower|finalize|write
                        (default compile); modes run in order:
                          raise   raise RuntimeError
                          enospc  raise OSError ENOSPC (a full disk)
                          exit    os._exit(TRTX_DOUBLE_EXIT_CODE or 3)
                          kill    SIGKILL itself
                          stderr  write TRTX_DOUBLE_STDERR_BYTES (default 50 MiB) to stderr
                          hang    start a grandchild (pid to TRTX_DOUBLE_PIDFILE), then sleep forever
                          garbage write a long non-JSON line into the protocol stream
                          print   print to stdout from Python and write to fd 1 natively
  TRTX_DOUBLE_PICKLE_VALUE  "bare": torch.load returns a bare nn.Module
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

STAGES = ("load", "compile", "lower", "finalize", "write")


def _env_list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def missing_guard(module: str) -> None:
    """Raise like a real missing top-level module when the knob says so."""
    if module in _env_list("TRTX_DOUBLE_MISSING"):
        raise ModuleNotFoundError(f"No module named '{module}'", name=module)


def feature_off(name: str) -> bool:
    return name in _env_list("TRTX_DOUBLE_FEATURES")


def summarize(value: Any, depth: int = 0) -> Any:
    """A JSON-able picture of an argument, for the call log."""
    if depth > 6:
        return "..."
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    describe = getattr(value, "_double_summary", None)
    if callable(describe):
        return describe()
    if isinstance(value, dict):
        return {str(k): summarize(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [summarize(v, depth + 1) for v in items]
    return {"type": type(value).__name__}


def record(call: str, **args: Any) -> None:
    path = os.environ.get("TRTX_DOUBLE_CALLS")
    if not path:
        return
    line = json.dumps({"call": call, "args": {k: summarize(v) for k, v in args.items()}})
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")


def fault(stage: str) -> None:
    spec = os.environ.get("TRTX_DOUBLE_FAULT", "")
    if not spec:
        return
    where, _, modes = spec.rpartition(":")
    if (where or "compile") != stage:
        return
    for mode in [m.strip() for m in modes.split(",") if m.strip()]:
        _apply(mode, stage)


def _apply(mode: str, stage: str) -> None:
    if mode == "raise":
        raise RuntimeError(f"double: injected failure in {stage}")
    if mode == "enospc":
        import errno

        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    if mode == "exit":
        sys.stderr.write(f"double: exiting during {stage}\n")
        sys.stderr.flush()
        os._exit(int(os.environ.get("TRTX_DOUBLE_EXIT_CODE", "3")))
    if mode == "kill":
        sys.stderr.write(f"double: killing itself during {stage}\n")
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "stderr":
        total = int(os.environ.get("TRTX_DOUBLE_STDERR_BYTES", str(50 * 1024 * 1024)))
        chunk = (b"double: stderr flood " + b"x" * 1002 + b"\n") * 64
        written = 0
        while written < total:
            piece = chunk[: total - written]
            os.write(2, piece)
            written += len(piece)
        os.write(2, b"double: end of stderr flood\n")
        return
    if mode == "hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        pidfile = os.environ.get("TRTX_DOUBLE_PIDFILE")
        if pidfile:
            tmp = pidfile + ".tmp"
            with open(tmp, "w", encoding="utf-8") as handle:
                handle.write(str(child.pid))
            os.replace(tmp, pidfile)
        while True:
            time.sleep(3600)
    if mode == "garbage":
        from trtx_bridge import channel

        channel.current().write_raw(b"Torch-TensorRT says hi " * 500 + b"\n")
        return
    if mode == "print":
        print("double: stray print on stdout", flush=True)
        os.write(1, b"double: stray native write on fd 1\n")
        return
    raise RuntimeError(f"double: unknown fault mode {mode!r}")


# --- a small stand-in for torch.fx --------------------------------------------


class Op:
    """An operator target; ``_schema.name`` is what real OpOverloads carry."""

    class _Schema:
        def __init__(self, name: str):
            self.name = name
            self.overload_name = "default"

    def __init__(self, qualified: str):
        self._schema = Op._Schema(qualified)
        self._text = qualified.replace("::", ".") + ".default"

    def __str__(self) -> str:
        return self._text


COPY_ = Op("aten::copy_")
CALL_DELEGATE = Op("higher_order::executorch_call_delegate")
GETITEM = Op("_operator::getitem")


class Node:
    def __init__(self, name: str, op: str, target: Any = None, args: tuple = ()):
        self.name = name
        self.op = op
        self.target = target if target is not None else name
        self.args = args

    def __repr__(self) -> str:
        return f"Node({self.name})"


class Graph:
    def __init__(self, nodes: list[Node]):
        self.nodes = nodes

    def output_node(self) -> Node:
        for node in reversed(self.nodes):
            if node.op == "output":
                return node
        raise ValueError("no output node")


class GraphModule:
    def __init__(self, graph: Graph, label: str):
        self.graph = graph
        self.label = label
        self.recompiles = 0
        self.meta: dict[str, Any] = {}

    def recompile(self) -> None:
        self.recompiles += 1

    def _double_summary(self) -> dict[str, Any]:
        return {"graph_module": self.label}


def kv_method_program(method: str, zero_copy: bool) -> Any:
    """An Edge-like program: k/v caches the engine aliases, plus a copy-back conv state.

    Output order is the one measured upstream after to_edge_transform_and_lower
    (k_cache, v_cache, conv_state), which crosses the write-back's pairing once
    the caches are rewired to their own placeholders.
    """
    from torch.export import ExportedProgram
    from torch.export.graph_signature import (
        ExportGraphSignature,
        InputKind,
        InputSpec,
        OutputKind,
        OutputSpec,
        TensorArgument,
    )

    k = Node("b_k_cache", "placeholder")
    v = Node("b_v_cache", "placeholder")
    conv = Node("b_conv_state", "placeholder")
    x = Node("x", "placeholder")
    lowered = Node("lowered_module_0", "get_attr")
    delegate = Node("executorch_call_delegate", "call_function", CALL_DELEGATE, (lowered, x, k, v, conv))
    items = [Node(f"getitem{'' if i == 0 else '_' + str(i)}", "call_function", GETITEM, (delegate, i)) for i in range(4)]
    k_value, v_value = (k, v) if zero_copy else (items[0], items[1])
    values = [k_value, v_value, items[2], items[3]]
    output = Node("output", "output", "output", (tuple(values),))
    graph = Graph([k, v, conv, x, lowered, delegate, *items, output])
    signature = ExportGraphSignature(
        input_specs=[
            InputSpec(InputKind.BUFFER, TensorArgument("b_k_cache"), "k_cache"),
            InputSpec(InputKind.BUFFER, TensorArgument("b_v_cache"), "v_cache"),
            InputSpec(InputKind.BUFFER, TensorArgument("b_conv_state"), "conv_state"),
            InputSpec(InputKind.USER_INPUT, TensorArgument("x"), None),
        ],
        output_specs=[
            OutputSpec(OutputKind.BUFFER_MUTATION, TensorArgument(k_value.name), "k_cache"),
            OutputSpec(OutputKind.BUFFER_MUTATION, TensorArgument(v_value.name), "v_cache"),
            OutputSpec(OutputKind.BUFFER_MUTATION, TensorArgument(items[2].name), "conv_state"),
            OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(items[3].name), None),
        ],
    )
    return ExportedProgram(GraphModule(graph, f"edge:{method}"), signature, origin=f"edge:{method}")


def mutation_order(program: Any) -> list[str | None]:
    return [s.target for s in program.graph_signature.output_specs if s.kind.name == "BUFFER_MUTATION"]
