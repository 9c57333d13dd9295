"""TEST DOUBLE of torch.export.graph_signature. See ../../README.md."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any


class InputKind(enum.Enum):
    USER_INPUT = enum.auto()
    PARAMETER = enum.auto()
    BUFFER = enum.auto()
    CONSTANT_TENSOR = enum.auto()
    CUSTOM_OBJ = enum.auto()
    TOKEN = enum.auto()


class OutputKind(enum.Enum):
    USER_OUTPUT = enum.auto()
    LOSS_OUTPUT = enum.auto()
    BUFFER_MUTATION = enum.auto()
    GRADIENT_TO_PARAMETER = enum.auto()
    GRADIENT_TO_USER_INPUT = enum.auto()
    USER_INPUT_MUTATION = enum.auto()
    TOKEN = enum.auto()


@dataclass
class TensorArgument:
    name: str


@dataclass
class InputSpec:
    kind: InputKind
    arg: Any
    target: str | None


@dataclass
class OutputSpec:
    kind: OutputKind
    arg: Any
    target: str | None


@dataclass
class ExportGraphSignature:
    input_specs: list[InputSpec]
    output_specs: list[OutputSpec]

    @property
    def user_inputs(self):
        return [s.arg.name for s in self.input_specs if s.kind == InputKind.USER_INPUT]

    @property
    def inputs_to_buffers(self):
        return {s.arg.name: s.target for s in self.input_specs if s.kind == InputKind.BUFFER}

    @property
    def buffers_to_mutate(self):
        return {s.arg.name: s.target for s in self.output_specs if s.kind == OutputKind.BUFFER_MUTATION}
