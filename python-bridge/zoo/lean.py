"""The zoo's archives load and run without transformers: ``python -m zoo.lean ZOO_DIR``.

Run in trtx's managed environment alone (no zoo package folder on the path),
as ``trtx export`` runs: each ``NAME.pt2`` of the manifest is read with
``torch.export.load`` and its module called on the archive's example inputs.
Prints one JSON line per model and exits 1 when transformers is importable or
any archive fails.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time

import torch


def main(argv: list[str]) -> int:
    if importlib.util.find_spec("transformers") is not None:
        print(json.dumps({"error": "transformers is importable: this check must run without it"}), flush=True)
        return 1
    folder = argv[0]
    with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as handle:
        manifest = json.load(handle)
    failed = 0
    for model in manifest["models"]:
        started = time.time()
        try:
            ep = torch.export.load(os.path.join(folder, model["file"]))
            args, kwargs = ep.example_inputs
            with torch.no_grad():
                out = ep.module()(*args, **kwargs)
            leaves = [t for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]
            row = {"name": model["name"], "ok": True, "outputs": [list(t.shape) for t in leaves]}
        except Exception as error:  # noqa: BLE001 - reported per model, the check goes on
            failed += 1
            row = {"name": model["name"], "ok": False, "error": f"{type(error).__name__}: {error}"[:400]}
        row["seconds"] = round(time.time() - started, 2)
        print(json.dumps(row), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
