"""The ``lower`` and ``finalize`` stages for ``engine == "reference"``: the
reference lowering (``trtx_bridge.standin_lowering``) in place of Torch-TensorRT's
compile and ExecuTorch export, for machines without TensorRT.

A factory's ``compile_options`` keep their Torch-TensorRT meaning where the
reference partitioner has one (``torch_executed_ops``, ``min_block_size``);
any other option is reported and ignored, since no TensorRT engine is built.
"""

from __future__ import annotations

from typing import Any

from .channel import Channel
from .errors import BridgeError, describe_exception
from .request import Request
from .sources import MethodSource

HONOURED_OPTIONS = ("torch_executed_ops", "min_block_size")


def lower_sources(sources: list[MethodSource], programs: dict[str, Any], request: Request, channel: Channel) -> tuple[Any, bool]:
    from .standin_lowering import lower
    from .standin_lowering.lower import BackendConflict
    from .standin_lowering.plan import StandinLoweringError

    options: dict[str, dict[str, Any]] = {}
    for source in sources:
        ignored = sorted(k for k in source.compile_options if k not in HONOURED_OPTIONS)
        if ignored:
            channel.warning(
                f"method {source.name}: compile option(s) {', '.join(ignored)} mean nothing to the reference "
                "lowering (no TensorRT engine is built) and are ignored",
                code="REFERENCE_OPTION_IGNORED",
            )
        options[source.name] = {k: v for k, v in source.compile_options.items() if k in HONOURED_OPTIONS}
    try:
        edge = lower(
            {s.name: programs[s.name] for s in sources},
            weight_streaming_budget=request.budget_bytes,
            options=options,
        )
    except (StandinLoweringError, BackendConflict) as exc:
        raise BridgeError(
            "LOWER",
            f"the reference lowering cannot stand in for this model: {describe_exception(exc)}",
            "Leave the part it names to ExecuTorch with compile_options={'torch_executed_ops': [...]} in a factory, "
            "or export with --engine tensorrt where Torch-TensorRT is installed.",
            stage="lower",
        ) from exc
    except ValueError as exc:
        # ExecuTorch keeps one named-data entry per key and refuses a key
        # added again with other bytes (executorch/exir/_serialize/_named_data_store.py,
        # "Duplicate key ... with different data"): two methods whose weights
        # share an FQN but not their values (two differently initialised
        # modules) cannot share the outer program's named data.
        if not str(exc).startswith("Duplicate key "):
            raise _lowering_failed(exc) from exc
        raise BridgeError(
            "LOWER",
            f"the methods hold different weights under one name: {describe_exception(exc)}",
            "A version 3 reference engine finds its weights by their fully qualified name in the program's named data, "
            "one entry per name: export methods of one model (one module, or modules holding equal weights).",
            stage="lower",
        ) from exc
    except Exception as exc:
        raise _lowering_failed(exc) from exc
    return edge, request.budget_bytes is not None


def _lowering_failed(exc: BaseException) -> BridgeError:
    return BridgeError(
        "LOWER",
        f"to_edge_transform_and_lower with the reference partitioner failed: {describe_exception(exc)}",
        "Export with --engine tensorrt where Torch-TensorRT is installed, or leave the failing part to ExecuTorch in a factory.",
        stage="lower",
    )


def finalize_config() -> Any:
    from .standin_lowering import executorch_config

    return executorch_config()
