"""trtx's bridge into a user's PyTorch / Torch-TensorRT / ExecuTorch environment.

Run as ``python -m trtx_bridge`` with this package's parent directory on
PYTHONPATH. It reads one JSON request on stdin and writes newline-delimited
JSON events on stdout; see ``schemas/bridge-protocol.schema.json`` in the trtx
repository and ``python-bridge/README.md``.

Nothing here imports torch at module load: the import check has to run, and
report what is missing, in an environment where torch itself is absent.
"""

PROTOCOL_VERSION = 2
BRIDGE_VERSION = "0.1.0"
