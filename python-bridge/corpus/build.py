"""Build trtx's real-program corpus: ``python -m corpus.build OUT_DIR``.

Each model of ``models.CORPUS`` goes through ExecuTorch's real pipeline --
``torch.export`` -> ``to_edge_transform_and_lower`` -> ``to_executorch`` --
so its programs are laid out by ExecuTorch's own passes (PropagateDevicePass,
the write-back insertion, device-aware memory planning, the emitter). Written
per model:

  NAME.pte            the reference lowering: TensorRTBackend delegates with
                      trtx reference engines (what ``trtx export --engine
                      reference`` makes)
  NAME.portable.pte   the same methods on ExecuTorch's portable kernels, no
                      delegate, for ExecuTorch's own runtime
  NAME.unnamed.pte    NAME.pte finalized without emit_mutable_buffer_names,
                      as Torch-TensorRT documents it (not for llama-shared)

and once: ``llama.mixed.pte`` (prefill and decode lowered to XNNPACK for the
CPU beside ``decode_tensorrt`` on the reference TensorRT lowering),
``llama-decode.pt2`` (the decoder's decode step saved with
``torch.export.save``, a model file for ``trtx export``), and
``manifest.json`` describing everything. Progress lines go to stdout as
``{"progress": ...}`` JSON; the last line is ``{"done": true}``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import sys
import time
from typing import Any

import torch
from trtx_bridge.standin_lowering import executorch_config, lower

from .models import CORPUS, CorpusModel, export_methods


def _say(message: str, **extra: Any) -> None:
    print(json.dumps({"progress": message, **extra}), flush=True)


def _write(program: Any, path: str) -> int:
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as handle:
        program.write_to_file(handle)
    os.replace(tmp, path)
    return os.path.getsize(path)


def _describe_inputs(inputs: Any) -> list[dict[str, Any]]:
    return [{"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape)} for t in inputs]


def _options(model: CorpusModel) -> dict[str, dict[str, Any]]:
    return {name: {"torch_executed_ops": model.torch_executed_ops, "min_block_size": model.min_block_size} for name in model.methods}


def _config(model: CorpusModel) -> Any:
    return executorch_config(initialized_buffers=model.initialized_buffers, share_mutable_buffers=model.share_mutable_buffers)


def _fresh(programs: dict[str, Any]) -> dict[str, Any]:
    """A private copy of one model's exported methods for one lowering.

    ``to_edge_transform_and_lower`` may rewrite the graph modules it is given
    in place, so each lowering gets its own copy; one deepcopy of the whole
    dict keeps the methods' shared buffers shared, as ``export_methods`` made
    them.
    """
    return copy.deepcopy(programs)


def build_model(model: CorpusModel, programs: dict[str, Any], out: str) -> dict[str, Any]:
    files: dict[str, str] = {}
    for variant, delegate in (("reference", True), ("portable", False)):
        name = f"{model.name}.pte" if delegate else f"{model.name}.portable.pte"
        edge = lower(_fresh(programs), options=_options(model), delegate=delegate)
        # The unnamed twin: the same lowering finalized the way Torch-TensorRT
        # documents it (edge.to_executorch(), ExecuTorch's default
        # emit_mutable_buffer_names=False), its caches identifiable only by
        # structure (docs/zero-copy-kv.md).
        upstream = copy.deepcopy(edge) if delegate and not model.share_mutable_buffers else None
        _write(edge.to_executorch(_config(model)), os.path.join(out, name))
        files[variant] = name
        if upstream is not None:
            config = _config(model)
            config.emit_mutable_buffer_names = False
            files["unnamed"] = f"{model.name}.unnamed.pte"
            _write(upstream.to_executorch(config), os.path.join(out, files["unnamed"]))
    return {
        "name": model.name,
        "description": model.description,
        "methods": {name: {"inputs": _describe_inputs(inputs)} for name, inputs in model.methods.items()},
        "files": files,
        "torch_executed_ops": list(model.torch_executed_ops),
        "initialized_buffers": list(model.initialized_buffers),
        "share_mutable_buffers": model.share_mutable_buffers,
    }


def build_mixed(model: CorpusModel, exported: dict[str, Any], out: str) -> str:
    """CPU methods on XNNPACK beside a GPU method on the reference TensorRT lowering."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower
    from trtx_bridge.standin_lowering.lower import check_backend
    from trtx_bridge.standin_lowering.partitioner import StandinPartitioner

    check_backend()
    programs = _fresh(exported)
    # A copy of its own, as a second module instance gave before: the GPU
    # method shares no tensors with the CPU methods.
    programs["decode_tensorrt"] = copy.deepcopy(exported["decode"])
    edge = to_edge_transform_and_lower(
        programs,
        partitioner={
            "prefill": [XnnpackPartitioner()],
            "decode": [XnnpackPartitioner()],
            "decode_tensorrt": [StandinPartitioner(min_block_size=model.min_block_size)],
        },
        compile_config=EdgeCompileConfig(_check_ir_validity=False),
    )
    name = f"{model.name}.mixed.pte"
    _write(edge.to_executorch(_config(model)), os.path.join(out, name))
    return name


def save_archive(model: CorpusModel, exported: dict[str, Any], out: str) -> str:
    program = exported["decode"]
    name = f"{model.name}-decode.pt2"
    tmp = os.path.join(out, f".tmp-{name}")
    torch.export.save(program, tmp)
    os.replace(tmp, os.path.join(out, name))
    return name


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m corpus.build")
    parser.add_argument("out")
    parser.add_argument("--only", action="append", default=[], help="build only these models (repeat)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    import executorch.version

    started = time.time()
    models = [m for m in CORPUS if not args.only or m.name in args.only]
    entries = []
    llama = next(m for m in CORPUS if m.name == "llama")
    llama_programs: dict[str, Any] | None = None
    # Each model is exported once; its lowerings, the mixed program and the
    # archive reuse (copies of) those exports.
    for index, model in enumerate(models):
        _say(f"exporting {model.name} ({', '.join(model.methods)})", index=index, total=len(models) + 2)
        programs = export_methods(model)
        entries.append(build_model(model, programs, args.out))
        if model is llama:
            llama_programs = programs
    if llama_programs is None:
        llama_programs = export_methods(llama)
    _say("exporting llama.mixed (XNNPACK beside the reference TensorRT lowering)", index=len(models), total=len(models) + 2)
    mixed = build_mixed(llama, llama_programs, args.out)
    _say("saving llama-decode.pt2 (torch.export.save)", index=len(models) + 1, total=len(models) + 2)
    archive = save_archive(llama, llama_programs, args.out)
    manifest = {
        "schema": "trtx.corpus/1",
        "models": entries,
        "mixed": {"file": mixed, "cpu_methods": ["prefill", "decode"], "tensorrt_methods": ["decode_tensorrt"]},
        "archive": {"file": archive, "model": "llama", "method": "decode"},
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "executorch": getattr(executorch.version, "__version__", "unknown"),
        },
        "seconds": round(time.time() - started, 1),
    }
    with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=2)
        handle.write("\n")
    print(json.dumps({"done": True}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
