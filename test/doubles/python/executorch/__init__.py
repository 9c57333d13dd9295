"""TEST DOUBLE of executorch for trtx's bridge tests. Not ExecuTorch. See ../README.md."""

from _trtx_double import missing_guard

missing_guard("executorch")

__version__ = "1.5.0+trtx.double"
