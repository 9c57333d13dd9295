"""Build trtx's model zoo: ``python -m zoo.build OUT_DIR [--only NAME]``.

Run from python-bridge with transformers importable (``npm run zoo`` puts the
zoo's package folder, made from requirements-zoo.lock, on PYTHONPATH). Writes
``NAME.pt2`` (``torch.export.save``) per model of ``models.ZOO`` and
``manifest.json``. Progress lines go to stdout as ``{"progress": ...}`` JSON.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import sys
import time
from typing import Any

import torch

from .models import MAX_CACHE, ZOO, ZooModel


def _say(message: str, **extra: Any) -> None:
    print(json.dumps({"progress": message, **extra}), flush=True)


def check_requirements() -> str:
    """transformers' own runtime requirements, met by what is importable (the managed env plus the zoo folder).

    The zoo lock holds only what the managed environment lacks (tools/relock-zoo.sh);
    this says so loudly when the managed environment's pins drift from what transformers needs.
    """
    from packaging.requirements import Requirement

    version = importlib.metadata.version("transformers")
    unmet = []
    for text in importlib.metadata.requires("transformers") or []:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        try:
            have = importlib.metadata.version(req.name)
        except importlib.metadata.PackageNotFoundError:
            unmet.append(f"{req} (missing)")
            continue
        if not req.specifier.contains(have, prereleases=True):
            unmet.append(f"{req} (have {have})")
    if unmet:
        raise SystemExit(f"transformers {version} needs what is not installed: {'; '.join(unmet)}")
    return version


def _describe(value: Any) -> dict[str, Any]:
    return {"dtype": str(value.dtype).removeprefix("torch."), "shape": list(value.shape)}


def _inputs(ep: torch.export.ExportedProgram) -> list[dict[str, Any]]:
    """The user inputs in the program's order, named after its placeholders."""
    args, kwargs = ep.example_inputs
    values = list(args) + list(kwargs.values())
    names = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    return [{"name": n, **_describe(v)} for n, v in zip(names, values)]


def _cache(ep: torch.export.ExportedProgram) -> dict[str, Any]:
    buffers = [s.target for s in ep.graph_signature.input_specs if s.kind.name == "BUFFER"]
    caches = [b for b in buffers if b.startswith(("key_cache_", "value_cache_"))]
    return {"buffers": len(caches), "max_cache_len": MAX_CACHE if caches else 0}


def build_one(model: ZooModel, out: str, transformers_version: str) -> dict[str, Any]:
    started = time.time()
    module, ep = model.build()
    path = os.path.join(out, f"{model.name}.pt2")
    tmp = os.path.join(out, f"{model.name}.tmp.pt2")  # torch.export.save wants the .pt2 ending
    torch.export.save(ep, tmp)
    os.replace(tmp, path)
    args, kwargs = ep.example_inputs
    with torch.no_grad():
        result = ep.module()(*args, **kwargs)
    outputs = [_describe(t) for t in torch.utils._pytree.tree_leaves(result) if isinstance(t, torch.Tensor)]
    return {
        "name": model.name,
        "description": model.description,
        "architecture": type(module).__name__,
        "model_type": module.config.model_type,
        "transformers": transformers_version,
        "params": sum(p.numel() for p in module.parameters()),
        "seconds": round(time.time() - started, 2),
        "file": os.path.basename(path),
        "bytes": os.path.getsize(path),
        "methods": {name: {"inputs": _inputs(ep), "outputs": outputs} for name in model.methods},
        "cache": _cache(ep),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m zoo.build")
    parser.add_argument("out")
    parser.add_argument("--only", action="append", default=[], help="build only these models (repeat)")
    args = parser.parse_args(argv)
    unknown = set(args.only) - {m.name for m in ZOO}
    if unknown:
        parser.error(f"no such zoo model: {', '.join(sorted(unknown))}")
    os.makedirs(args.out, exist_ok=True)
    started = time.time()
    transformers_version = check_requirements()
    models = [m for m in ZOO if not args.only or m.name in args.only]
    entries = []
    for index, model in enumerate(models):
        _say(f"exporting {model.name}: {model.description}", index=index, total=len(models))
        entries.append(build_one(model, args.out, transformers_version))
    manifest = {
        "schema": "trtx.zoo/1",
        "models": entries,
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "transformers": transformers_version},
        "seconds": round(time.time() - started, 1),
    }
    with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=2)
    print(json.dumps({"done": True}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
