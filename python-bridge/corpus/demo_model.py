"""The PyTorch model `trtx demo --from-pytorch` exports: the corpus's
Llama-style decoder (models.TinyLlama), as a factory in the bridge's contract
(python-bridge/README.md): prefill and decode, traced from one module.

    trtx export python-bridge/corpus/demo_model.py:make_decoder -o llama.pte --engine reference
"""

from __future__ import annotations

from typing import Any

# The factory file's folder is on sys.path (the bridge imports it as a script would be run).
from models import CORPUS, build_module


def make_decoder() -> dict[str, Any]:
    llama = next(m for m in CORPUS if m.name == "llama")
    module = build_module(llama)
    return {"methods": {name: (module, inputs) for name, inputs in llama.methods.items()}}
