"""TEST DOUBLE of torch_tensorrt.dynamo. See ../../README.md."""

from _trtx_double import Graph, GraphModule, Node, fault, record


def compile(exported_program, inputs=None, *, arg_inputs=None, kwarg_inputs=None, enable_weight_streaming=False, **options):
    record(
        "torch_tensorrt.dynamo.compile",
        exported_program=exported_program,
        arg_inputs=arg_inputs,
        kwarg_inputs=kwarg_inputs,
        enable_weight_streaming=enable_weight_streaming,
        options=options,
    )
    fault("compile")
    label = f"trt:{getattr(exported_program, 'origin', '?')}"
    return GraphModule(Graph([Node("output", "output", "output", ((),))]), label)


def export(gm, *, arg_inputs=None, kwarg_inputs=None, dynamic_shapes=None, cross_compile_module=False, use_legacy_exporter=False):
    from torch.export import ExportedProgram

    record(
        "torch_tensorrt.dynamo.export",
        gm=gm,
        arg_inputs=arg_inputs,
        kwarg_inputs=kwarg_inputs,
        dynamic_shapes=dynamic_shapes,
        use_legacy_exporter=use_legacy_exporter,
    )
    return ExportedProgram(gm, None, origin=f"engine-bearing:{gm.label}")
