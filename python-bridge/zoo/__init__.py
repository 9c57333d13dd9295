"""trtx's model zoo: tiny, randomly initialised models written by others.

Hugging Face transformers models (tiny configs, fixed seeds, no downloads),
exported the way transformers documents it, saved with ``torch.export.save``:
the conformance suite for ``trtx export --engine reference`` -> ``check`` ->
``rewrite --zero-copy-kv`` -> ``verify --zero-copy-kv``. ``python -m zoo.build
OUT`` builds it (``npm run zoo``); transformers comes from
``requirements-zoo.lock``, installed beside trtx's managed environment, never
into it. The archives load without transformers (``python -m zoo.lean OUT``).
"""
