"""A test program for the runner: a small decoder lowered with the reference
lowering (python-bridge/trtx_bridge/reference), its engine written as
reference engine version 2 (weights inside the engine's program) or version 3
(the agreed contract, docs/reference-lowering.md
section 1: the engine's program emitted with
``ExecutorchBackendConfig(external_constants=True)``, each constant's bytes
handed to ExecuTorch as the outer program's named data through
``PreprocessResult.data_store_output``).

The bridge's own version-3 writer is written elsewhere; this script makes the
same bytes by wrapping the bridge's version-2 preprocess, so the runner's
executor can be checked end to end before it lands (and against it after).

    PYTHONPATH=python-bridge python native-runner/tests/make_v3_program.py OUT.pte --version 3 [--hidden N --layers L]

``--hidden``/``--layers`` size the weights: L linear layers of N x N float32
(``--hidden 8192 --layers 4`` is 1 GiB), for the loader's peak-memory check.
"""

from __future__ import annotations

import argparse
import copy
import sys

import torch
from torch import nn


class Decoder(nn.Module):
    """A KV-cache decode step: x through L linear layers, the result written
    into the cache at input_pos, the cache summed."""

    def __init__(self, hidden: int, layers: int):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(hidden, hidden, bias=False) for _ in range(layers))
        self.register_buffer("k_cache", torch.zeros(1, 4, hidden), persistent=False)

    def forward(self, x, input_pos):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        self.k_cache.index_copy_(1, input_pos, x.view(1, 1, -1))
        return self.k_cache.sum(dim=1) * 0.5


def v3_preprocess(edge_program, compile_specs):
    """The bridge's preprocess with the weights moved out (engine version 3)."""
    from executorch.exir import EdgeCompileConfig, EdgeProgramManager, ExecutorchBackendConfig
    from executorch.exir._serialize._named_data_store import NamedDataStore
    from executorch.exir.backend.backend_details import PreprocessResult
    from trtx_bridge.reference import engine as engine_mod
    from trtx_bridge.reference.blob import serialize_blob
    from trtx_bridge.reference.plan import plan_engine
    from trtx_bridge.reference.subprogram import _index_copy_as_index_put

    program = copy.deepcopy(edge_program)
    _index_copy_as_index_put(program.graph_module)
    manager = EdgeProgramManager({"forward": program}, compile_config=EdgeCompileConfig(_check_ir_validity=False))
    finalized = manager.to_executorch(ExecutorchBackendConfig(external_constants=True))
    out = finalized._emitter_output
    store = NamedDataStore()
    weights = 0
    for fqns in out.external_constant_map.values():
        for fqn, index in fqns.items():
            data = out.external_constant_buffer[index]
            store.add_named_data(fqn, data, alignment=64)
            weights += len(data)
    plan = plan_engine(edge_program, compile_specs, bytes(finalized.buffer))
    plan.engine.streamable_weight_bytes = weights
    engine_mod.VERSION = 3
    try:
        engine = engine_mod.encode_engine(plan.engine)
    finally:
        engine_mod.VERSION = 2
    return PreprocessResult(processed_bytes=serialize_blob(engine, plan.metadata), data_store_output=store.get_named_data_store_output())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--version", type=int, choices=(2, 3), default=3)
    parser.add_argument("--hidden", type=int, default=8)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--budget", type=int, default=None)
    args = parser.parse_args(argv)

    from trtx_bridge.reference import backend as backend_mod
    from trtx_bridge.reference.lower import executorch_config, lower

    if args.version == 3:
        backend_mod.TensorRTBackend.preprocess = staticmethod(v3_preprocess)
    torch.manual_seed(0)
    model = Decoder(args.hidden, args.layers).eval()
    with torch.no_grad():
        exported = torch.export.export(model, (torch.randn(1, args.hidden), torch.tensor([0])))
        edge = lower({"forward": exported}, weight_streaming_budget=args.budget)
        program = edge.to_executorch(executorch_config())
    with open(args.out, "wb") as f:
        program.write_to_file(f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
