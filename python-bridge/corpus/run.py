"""Run corpus programs in ExecuTorch's own runtime (``executorch.runtime``):
``python -m corpus.run MODEL PTE [PTE...] [--steps N] [--methods a,b]``, or
several models' programs in one interpreter with ``python -m corpus.run --jobs
FILE``, FILE a JSON list of ``{"model", "ptes", "steps"?, "methods"?}``
(printing ``{"jobs": [{"model", "runs"}, ...]}`` in the same order).

The inputs are the model's own (``models.CORPUS``): a decoder runs ``prefill``
once and then ``decode`` N times at the next positions; a one-method model
runs ``forward`` N times. Prints one JSON document on stdout: per program, per method call, each
output's dtype, shape and sha256 over its bytes, and its first values (one
interpreter start for several programs: importing torch takes seconds).
The same program run twice gives the same document; trtx's tests compare the
documents of a program before and after a rewrite.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from typing import Any

import torch

from .models import CORPUS, DIM


def _inputs(method: str, step: int, model: Any) -> list[torch.Tensor]:
    x, pos = model.methods[method]
    g = torch.Generator().manual_seed(1000 + step)
    t = x.shape[1]
    start = int(pos[0]) + (0 if method == "prefill" else step)
    return [torch.randn(1, t, DIM, generator=g), torch.arange(start, start + t, dtype=torch.long)]


def _describe(value: Any) -> dict[str, Any]:
    t = value.contiguous()
    raw = t.numpy().tobytes()
    return {
        "dtype": str(t.dtype).removeprefix("torch."),
        "shape": list(t.shape),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "head": [float(v) for v in t.flatten()[:4]],
    }


def run_program(path: str, model: Any, methods: list[str], steps: int) -> dict[str, Any]:
    from executorch.runtime import Runtime

    program = Runtime.get().load_program(path)
    loaded = {name: program.load_method(name) for name in methods}
    plan = ([("prefill", 0)] if "prefill" in loaded else []) + [
        (name, step) for step in range(steps) for name in methods if name != "prefill"
    ]
    calls = []
    for name, step in plan:
        outputs = loaded[name].execute(_inputs(name, step, model))
        calls.append({"method": name, "step": step, "outputs": [_describe(o) for o in outputs]})
    return {"program": path, "calls": calls}


def run_job(name: str, ptes: list[str], steps: int, methods: list[str]) -> dict[str, Any] | None:
    """One model's programs; None when the corpus has no model ``name``."""
    model = next((m for m in CORPUS if m.name == name), None)
    if model is None:
        print(f"no corpus model {name!r}", file=sys.stderr)
        return None
    chosen = methods or list(model.methods)
    return {"model": name, "runs": [run_program(path, model, chosen, steps) for path in ptes]}


def _jobs(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        jobs = json.load(f)
    done = []
    for job in jobs:
        result = run_job(job["model"], list(job["ptes"]), int(job.get("steps", 3)), list(job.get("methods", [])))
        if result is None:
            return 2
        done.append(result)
    print(json.dumps({"jobs": done}))
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--jobs"] and len(argv) == 2:
        return _jobs(argv[1])
    parser = argparse.ArgumentParser(prog="python -m corpus.run")
    parser.add_argument("model")
    parser.add_argument("pte", nargs="+")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--methods", default="", help="comma list; default the model's methods")
    args = parser.parse_args(argv)
    result = run_job(args.model, args.pte, args.steps, [m for m in args.methods.split(",") if m])
    if result is None:
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
