"""TEST DOUBLE of torch_tensorrt.executorch. See ../../README.md.

Like the real module, it imports without executorch.exir and then refuses
every attribute.
"""

import dataclasses
import importlib.util
import inspect

from _trtx_double import fault, feature_off, kv_method_program, record


def _has_exir():
    try:
        return importlib.util.find_spec("executorch.exir") is not None
    except ModuleNotFoundError:
        return False


if not _has_exir():

    def __getattr__(name):
        raise ImportError(f"Cannot access torch_tensorrt.executorch.{name}: ExecuTorch with executorch.exir is required.")

else:

    class TensorRTPartitioner:
        def __init__(self, compile_specs=None):
            self.compile_specs = list(compile_specs or [])

    def get_edge_compile_config():
        from executorch.exir import EdgeCompileConfig

        return EdgeCompileConfig(_check_ir_validity=False)

    def export(
        source,
        *,
        inputs=None,
        arg_inputs=None,
        kwarg_inputs=None,
        dynamic_shapes=None,
        retrace=None,
        transform_passes=None,
        partitioners=None,
        compile_specs=None,
        compile_config=None,
        constant_methods=None,
        zero_copy_kv=False,
        generate_etrecord=False,
        weight_streaming_budget_per_engine=None,
    ):
        from executorch.exir import EdgeProgramManager

        record(
            "torch_tensorrt.executorch.export",
            source=source,
            arg_inputs=arg_inputs,
            kwarg_inputs=kwarg_inputs,
            partitioners=partitioners,
            zero_copy_kv=zero_copy_kv,
            weight_streaming_budget_per_engine=weight_streaming_budget_per_engine,
        )
        fault("lower")
        names = list(source) if isinstance(source, dict) else ["forward"]
        # The real export claims engines with TensorRTPartitioner before any
        # caller partitioner; the double only records that it would.
        record("torch_tensorrt.executorch.TensorRTPartitioner", methods=names)
        return EdgeProgramManager({name: kv_method_program(name, zero_copy_kv) for name in names})

    _dropped = [
        name for name, knob in (("zero_copy_kv", "no_zero_copy"), ("weight_streaming_budget_per_engine", "no_budget")) if feature_off(knob)
    ]
    if _dropped:
        # An older torch_tensorrt: the keyword is not in the signature at all.
        _full = inspect.signature(export)
        export.__signature__ = _full.replace(parameters=[p for p in _full.parameters.values() if p.name not in _dropped])

    if not feature_off("no_zero_copy"):

        def zero_copy_backend_config(config=None):
            from executorch.exir import ExecutorchBackendConfig

            record("torch_tensorrt.executorch.zero_copy_backend_config", config=config)
            base = config if config is not None else ExecutorchBackendConfig()
            return dataclasses.replace(base, to_out_var_pass="unstage_aliased_buffers_pass")

    if not feature_off("no_check") and not feature_off("no_zero_copy"):

        def check_zero_copy_kv(program):
            record("torch_tensorrt.executorch.check_zero_copy_kv", methods=sorted(program.methods))
