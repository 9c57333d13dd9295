"""The export: load, trace, compile, lower, order mutations, finalize, write.

API this is written against (see python-bridge/README.md for versions):
  torch.export.load / torch.export.export
  torch_tensorrt.dynamo.compile(ep, arg_inputs=, kwarg_inputs=, enable_weight_streaming=)
  torch_tensorrt.dynamo.export(gm, arg_inputs=, kwarg_inputs=, dynamic_shapes=, use_legacy_exporter=)
  torch_tensorrt.executorch.export(source, *, arg_inputs=, kwarg_inputs=,
      dynamic_shapes=, zero_copy_kv=, weight_streaming_budget_per_engine=)
      -> executorch.exir.EdgeProgramManager (TensorRTPartitioner applied first)
  torch_tensorrt.executorch.zero_copy_backend_config(config) -> ExecutorchBackendConfig
  torch_tensorrt.executorch.check_zero_copy_kv(program)   (when present)
  EdgeProgramManager.to_executorch(config) -> ExecutorchProgramManager
  ExecutorchProgramManager.write_to_file(f), .exported_program(name), .methods
"""

from __future__ import annotations

import logging
import os
from typing import Any

from . import PROTOCOL_VERSION
from .channel import Channel
from .deps import capabilities, import_required, versions
from .devices import export_device, on_device
from .errors import BridgeError, describe_exception
from .mutation_order import apply_copyback_order, plan_copyback_order, predicted_crossings, resolve_lineage
from .request import Request
from .signature import describe_signature
from .sources import MethodSource, example_inputs_of, load_sources
from .write import write_program as _write

_LOG = logging.getLogger("trtx_bridge.pipeline")

# Fraction of the bar each stage starts at. Compilation dominates real runs.
_STAGE_START = {
    "check": 0.0,
    "load": 0.03,
    "trace": 0.08,
    "reference": 0.11,
    "compile": 0.15,
    "lower": 0.70,
    "order_mutations": 0.82,
    "finalize": 0.84,
    "verify": 0.94,
    "write": 0.96,
}


def _stage(channel: Channel, stage: str, message: str | None = None) -> None:
    channel.progress(stage, _STAGE_START[stage], message)


def _fail(type_: str, stage: str, what: str, exc: BaseException, hint: str) -> BridgeError:
    _LOG.error("%s failed", what, exc_info=exc)
    return BridgeError(type_, f"{what}: {describe_exception(exc)}", hint, stage=stage)


def run(request: Request, channel: Channel) -> dict[str, Any]:
    reference = request.engine == "reference"
    _stage(channel, "check", "importing torch, executorch" if reference else "importing torch, torch_tensorrt, executorch")
    modules = import_required(request.engine)
    caps = capabilities(modules)
    # Which side un-stages the KV caches: Torch-TensorRT's own zero-copy export
    # when this build has it (pytorch/TensorRT#4667), else a staged export that
    # trtx's TypeScript pass rewrites afterwards. The reference lowering always
    # writes a staged program. The result says which ran.
    zero_copy_path = None
    if request.zero_copy_kv:
        zero_copy_path = "torch_tensorrt" if (caps["zero_copy_kv"] and not reference) else "trtx"
        if zero_copy_path == "trtx" and not reference:
            channel.warning(
                "this torch_tensorrt has no zero-copy KV export (pytorch/TensorRT#4667); "
                "exporting staged, and trtx un-stages the caches when it finishes the program",
                code="ZERO_COPY_STAGED",
            )

    _stage(channel, "load", f"reading {os.path.basename(request.model)}")
    sources = load_sources(request.model, request.methods, request.allow_pickle)
    names = [s.name for s in sources]
    _LOG.info("methods: %s", ", ".join(names))

    programs = _trace(sources, channel)
    reference_file = None
    if request.reference is not None:
        from .reference_outputs import record

        _stage(channel, "reference", f"running the exported model eagerly ({request.reference.steps} steps per method)")
        reference_file = record(programs, request, channel)
    # Lower and finalize without autograd: ExecuTorch's passes run the graph
    # on the program's real tensors, and a model exported the documented way
    # (model.eval(), torch.export.export, no torch.no_grad()) keeps
    # requires_grad on its parameters, so an in-place buffer update there
    # fails ("a leaf Variable that requires grad is being used in an in-place
    # operation", trtx issue 24). No value changes; only the graph's tape goes.
    with modules["torch"].no_grad():
        if reference:
            from .standin_export import lower_sources

            _stage(channel, "lower", "lowering to ExecuTorch with the reference partitioner (trtx reference engines, no TensorRT)")
            edge, budget_baked = lower_sources(sources, programs, request, channel)
        else:
            compiled = _compile(sources, programs, request, modules, channel)
            _stage(channel, "lower", "lowering to ExecuTorch with the TensorRT partitioner")
            edge, budget_baked = _lower(sources, compiled, request, modules, caps, channel, zero_copy_path)

        _stage(channel, "order_mutations", "putting copy-back mutations first")
        reorder = _order_mutations(edge, channel)
        _check_mutation_maps(edge, channel)

        _stage(channel, "finalize", "to_executorch")
        program = _finalize(edge, request, zero_copy_path, modules)

    _stage(channel, "verify", "checking the finalized program")
    _verify(program, zero_copy_path, modules, caps, channel)

    _stage(channel, "write", f"writing {os.path.basename(request.output)}")
    written = _write(program, request.output)
    channel.progress("write", 1.0, "done")

    methods = []
    for name in _method_names(program, names):
        ep = program.exported_program(name)
        methods.append(
            {
                "name": name,
                "signature": describe_signature(ep.graph_signature),
                "mutations": reorder.get(name, {"copy_back": [], "in_place": [], "reordered": 0}),
            }
        )
    return {
        "mode": "export",
        "protocol": PROTOCOL_VERSION,
        "engine": request.engine,
        "program": written,
        "reference": reference_file,
        "methods": methods,
        "zero_copy_kv": request.zero_copy_kv,
        "zero_copy_kv_path": zero_copy_path,
        "weight_streaming": {
            "budget_bytes": None if request.budget_bytes is None else str(request.budget_bytes),
            "enabled_at_compile": request.budget_bytes is not None,
            "budget_baked": budget_baked,
        },
        "versions": versions(modules),
        "capabilities": caps,
    }


def _method_names(program: Any, fallback: list[str]) -> list[str]:
    found = getattr(program, "methods", None)
    if not found:
        return fallback
    # Keep the request's order for the methods it named; the set has none.
    ordered = [n for n in fallback if n in found]
    return ordered + sorted(n for n in found if n not in ordered)


def _trace(sources: list[MethodSource], channel: Channel) -> dict[str, Any]:
    import torch

    programs: dict[str, Any] = {}
    to_trace = [s for s in sources if s.exported_program is None]
    if to_trace:
        _stage(channel, "trace", "torch.export.export")
    for source in sources:
        if source.exported_program is not None:
            programs[source.name] = source.exported_program
            if not source.example_inputs and not source.example_kwarg_inputs:
                source.example_inputs, source.example_kwarg_inputs = example_inputs_of(source.exported_program, source.origin)
            continue
        try:
            programs[source.name] = torch.export.export(
                source.module,
                source.example_inputs,
                kwargs=source.example_kwarg_inputs or None,
                dynamic_shapes=source.dynamic_shapes,
            )
        except Exception as exc:
            raise _fail(
                "TRACE",
                "trace",
                f"torch.export.export of method {source.name} failed",
                exc,
                "The model must be exportable by torch.export (no data-dependent Python control flow); "
                "torch.export's message above names the construct. Export it yourself and save a .pt2 to iterate faster.",
            ) from exc
    return programs


def _compile(
    sources: list[MethodSource],
    programs: dict[str, Any],
    request: Request,
    modules: dict[str, Any],
    channel: Channel,
) -> dict[str, Any]:
    torch_tensorrt = modules["torch_tensorrt"]
    streaming = request.budget_bytes is not None
    compiled: dict[str, Any] = {}
    span = _STAGE_START["lower"] - _STAGE_START["compile"]
    for index, source in enumerate(sources):
        channel.progress(
            "compile",
            _STAGE_START["compile"] + span * index / len(sources),
            f"Torch-TensorRT: method {source.name}" + (" with weight streaming" if streaming else ""),
        )
        try:
            compiled[source.name] = torch_tensorrt.dynamo.compile(
                programs[source.name],
                arg_inputs=source.example_inputs,
                kwarg_inputs=source.example_kwarg_inputs or None,
                enable_weight_streaming=streaming,
                **source.compile_options,
            )
        except Exception as exc:
            raise _fail(
                "COMPILE",
                "compile",
                f"Torch-TensorRT could not compile method {source.name}",
                exc,
                "stderr has Torch-TensorRT's log; an operator TensorRT cannot take can be left to "
                "PyTorch through compile_options in a factory (e.g. {'min_block_size': 1} or torch_executed_ops).",
            ) from exc
    return compiled


def _lower(
    sources: list[MethodSource],
    compiled: dict[str, Any],
    request: Request,
    modules: dict[str, Any],
    caps: dict[str, bool],
    channel: Channel,
    zero_copy_path: str | None,
) -> tuple[Any, bool]:
    export = modules["export"]
    kwargs: dict[str, Any] = {}
    budget_baked = False
    if request.budget_bytes is not None:
        if caps["weight_streaming_budget"]:
            kwargs["weight_streaming_budget_per_engine"] = request.budget_bytes
            budget_baked = True
        else:
            channel.warning(
                "this torch_tensorrt cannot bake a weight streaming budget at export; "
                "the engines are built for streaming and trtx sets the budget when it finishes the program",
                code="BUDGET_NOT_BAKED",
            )
    if zero_copy_path == "torch_tensorrt":
        kwargs["zero_copy_kv"] = True

    single = len(sources) == 1 and sources[0].name == "forward"
    try:
        if single:
            source = sources[0]
            # A compiled GraphModule plus its inputs: export() runs the same
            # Torch-TensorRT exporter the mapping form needs done by hand.
            if source.dynamic_shapes is not None:
                kwargs["dynamic_shapes"] = source.dynamic_shapes
            edge = export(
                compiled["forward"],
                arg_inputs=source.example_inputs,
                kwarg_inputs=source.example_kwarg_inputs or None,
                **kwargs,
            )
        else:
            # Several methods (or one not named forward) go in as a mapping,
            # which export() accepts only as engine-bearing ExportedPrograms.
            to_program = modules["torch_tensorrt"].dynamo.export
            device = export_device()
            mapping = {}
            for source in sources:
                mapping[source.name] = to_program(
                    compiled[source.name],
                    arg_inputs=on_device(source.example_inputs, device, modules),
                    kwarg_inputs=on_device(source.example_kwarg_inputs or None, device, modules),
                    dynamic_shapes=source.dynamic_shapes,
                    # The legacy exporter is what export() itself uses for a
                    # GraphModule (retrace=False): it declares the engine's
                    # buffer mutations while building the program.
                    use_legacy_exporter=True,
                )
            edge = export(mapping, **kwargs)
    except BridgeError:
        raise
    except Exception as exc:
        raise _fail(
            "LOWER",
            "lower",
            "torch_tensorrt.executorch.export failed",
            exc,
            "A zero-copy refusal names the buffer at fault: export without --zero-copy-kv, or fix the model's cache update, and try again.",
        ) from exc
    return edge, budget_baked


def _order_mutations(edge: Any, channel: Channel) -> dict[str, dict[str, Any]]:
    lineage, which = resolve_lineage()
    if which != "executorch":
        channel.warning(
            "executorch's _inplace_lineage is not importable; copy-back ordering used trtx's stand-in "
            "predicate, which may disagree with this executorch's write-back pass",
            code="LINEAGE_FALLBACK",
        )
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(edge.methods):
        program = edge.exported_program(name)
        try:
            plan = plan_copyback_order(program, lineage)
            moved = apply_copyback_order(program, plan)
        except ValueError as exc:
            raise _fail(
                "ORDER_MUTATIONS",
                "order_mutations",
                f"cannot order the mutations of method {name}",
                exc,
                "The Edge program's graph and signature disagree; this is a bug upstream or in a transform pass.",
            ) from exc
        for reason in plan.residual:
            channel.warning(f"method {name}: {reason}", code="MUTATION_ORDER")
        if moved:
            _LOG.info("method %s: moved %d mutation output(s) so copy-backs come first", name, moved)
        out[name] = {"copy_back": plan.copy_back, "in_place": plan.in_place, "reordered": moved}
    return out


def _finalize(edge: Any, request: Request, zero_copy_path: str | None, modules: dict[str, Any]) -> Any:
    from executorch.exir import ExecutorchBackendConfig

    if request.engine == "reference":
        from .standin_export import finalize_config

        config = finalize_config()
    else:
        # Names on mutable buffers say which cache is which in every later
        # diagnostic; ExecuTorch omits them unless asked.
        config = ExecutorchBackendConfig(emit_mutable_buffer_names=True)
    if zero_copy_path == "torch_tensorrt":
        # The second half of zero-copy: without it the engine writes a staging
        # copy that is thrown away and the cache never updates.
        config = modules["torch_tensorrt.executorch"].zero_copy_backend_config(config)
    try:
        return edge.to_executorch(config)
    except Exception as exc:
        raise _fail(
            "FINALIZE",
            "finalize",
            "to_executorch failed",
            exc,
            "With --zero-copy-kv the message names the buffer that cannot be un-staged.",
        ) from exc


def _verify(program: Any, zero_copy_path: str | None, modules: dict[str, Any], caps: dict[str, bool], channel: Channel) -> None:
    # A staged export (zero_copy_path "trtx") is not zero-copy yet: trtx checks
    # the program after its own rewrite.
    if zero_copy_path == "torch_tensorrt":
        if caps["check_zero_copy_kv"]:
            try:
                modules["torch_tensorrt.executorch"].check_zero_copy_kv(program)
            except Exception as exc:
                raise _fail(
                    "ZERO_COPY_CHECK",
                    "verify",
                    "the finalized program fails Torch-TensorRT's zero-copy check",
                    exc,
                    "The cache would never update on device. Export without --zero-copy-kv, or fix what the message names.",
                ) from exc
        else:
            channel.warning(
                "this torch_tensorrt has no check_zero_copy_kv; trtx check still verifies the written program",
                code="ZERO_COPY_UNCHECKED",
            )


def _check_mutation_maps(edge: Any, channel: Channel) -> None:
    """Warn where the write-back pass would pair a mutation with another buffer's value."""
    for name in sorted(edge.methods):
        try:
            problems = predicted_crossings(edge.exported_program(name))
        except Exception:  # noqa: BLE001 - a diagnostic, never a reason to fail the export
            _LOG.debug("mutation map check skipped for %s", name, exc_info=True)
            continue
        for problem in problems:
            channel.warning(f"method {name}: finalized mutation map is crossed: {problem}", code="MUTATION_MAP")
