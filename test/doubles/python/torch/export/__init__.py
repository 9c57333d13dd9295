"""TEST DOUBLE of torch.export. See ../../README.md."""

from _trtx_double import fault, record


class ExportedProgram:
    # graph_signature: torch's keyword; the submodule of that name is imported at the end.
    def __init__(self, graph_module=None, graph_signature=None, origin="", example_inputs=None):  # noqa: F811
        self.graph_module = graph_module
        self._graph_signature = graph_signature
        self.origin = origin
        self.example_inputs = example_inputs

    @property
    def graph_signature(self):
        return self._graph_signature

    def _double_summary(self):
        return {"program": self.origin}


def _user_program(origin, example_inputs):
    from _trtx_double import Graph, GraphModule, Node

    from .graph_signature import ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec, TensorArgument

    x = Node("x", "placeholder")
    out = Node("output", "output", "output", ((x,),))
    signature = ExportGraphSignature(
        input_specs=[InputSpec(InputKind.USER_INPUT, TensorArgument("x"), None)],
        output_specs=[OutputSpec(OutputKind.USER_OUTPUT, TensorArgument("x"), None)],
    )
    return ExportedProgram(GraphModule(Graph([x, out]), origin), signature, origin, example_inputs)


def load(f, *, extra_files=None, expected_opset_version=None):
    import os

    import torch

    record("torch.export.load", f=os.path.basename(str(f)))
    fault("load")
    return _user_program(f"archive:{os.path.basename(str(f))}", ((torch.zeros(1, 4),), {}))


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False, **rest):
    record("torch.export.export", mod=mod, args=args, kwargs=kwargs, dynamic_shapes=dynamic_shapes)
    return _user_program(f"traced:{type(mod).__name__}", (tuple(args), dict(kwargs or {})))


from . import graph_signature  # noqa: F401
