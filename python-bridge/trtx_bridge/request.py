"""Parse and validate the one request the bridge reads on stdin.

Mirrors the ``request`` definition in ``schemas/bridge-protocol.schema.json``;
the TypeScript side validates before sending, this side validates again because
the bridge can be run by hand.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from . import PROTOCOL_VERSION
from .errors import BridgeError

MAX_REQUEST_BYTES = 1 << 20
BUDGET_LIMIT = 1 << 63
# Matched with fullmatch: "$" in a Python pattern also matches before a final
# newline, so "forward\n" or "5\n" would pass (test/vectors/sizes.json
# "trailing_newline"; the zod schema and the JSON Schema refuse them).
_METHOD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BUDGET = re.compile(r"0|[1-9][0-9]*")
_KEYS = {
    "protocol",
    "model",
    "output",
    "methods",
    "budget_bytes",
    "zero_copy_kv",
    "allow_pickle",
    "check_only",
    "engine",
    "reference",
}
MAX_REFERENCE_STEPS = 10_000
ENGINES = ("tensorrt", "reference")

_HINT = "This is a bug in the program that drives the bridge (trtx sends a valid request); see schemas/bridge-protocol.schema.json."


@dataclass(frozen=True)
class ReferenceRequest:
    # Where the bridge writes the reference outputs (a temporary path TS
    # chooses; it moves the file beside the program), how many steps, and the
    # program's final name, which the file records.
    path: str
    steps: int
    program: str


@dataclass(frozen=True)
class Request:
    model: str
    output: str
    methods: list[str] | None
    budget_bytes: int | None
    zero_copy_kv: bool
    allow_pickle: bool
    check_only: bool
    # "tensorrt": Torch-TensorRT builds TensorRT engines; "reference": the
    # reference lowering (trtx_bridge/standin_lowering) writes reference engines.
    engine: str = "tensorrt"
    # None: no eager run, no reference file (trtx export --no-reference).
    reference: ReferenceRequest | None = None


def _bad(message: str) -> BridgeError:
    return BridgeError("REQUEST", message, _HINT, stage="request")


def parse_budget_bytes(budget: object) -> int:
    """The request's budget_bytes (not null): canonical decimal digits below
    2**63, as the protocol's DecimalBytes states it (test/vectors/sizes.json
    ``request``). A string, not a number: byte counts past 2**53 do not
    survive a JSON number on the JavaScript side."""
    if not isinstance(budget, str) or not _BUDGET.fullmatch(budget):
        raise _bad("budget_bytes must be null or a decimal string of bytes")
    value = int(budget)
    if value >= BUDGET_LIMIT:
        raise _bad("budget_bytes must be below 2**63")
    return value


def parse_request(raw: bytes) -> Request:
    if len(raw) > MAX_REQUEST_BYTES:
        raise _bad(f"request is {len(raw)} bytes; at most {MAX_REQUEST_BYTES} are read")
    try:
        data: Any = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _bad(f"request is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise _bad("request must be a JSON object")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise _bad(f"request has unknown field(s): {', '.join(unknown)}")
    missing = sorted(_KEYS - set(data))
    if missing:
        raise _bad(f"request lacks field(s): {', '.join(missing)}")
    if data["protocol"] != PROTOCOL_VERSION or isinstance(data["protocol"], bool):
        raise BridgeError(
            "PROTOCOL_VERSION",
            f"request speaks protocol {data['protocol']!r}; this bridge speaks {PROTOCOL_VERSION}",
            "The trtx CLI and its python-bridge come from different installs; reinstall trtx.",
            stage="request",
        )
    for key in ("zero_copy_kv", "allow_pickle", "check_only"):
        if not isinstance(data[key], bool):
            raise _bad(f"{key} must be true or false")
    for key in ("model", "output"):
        if not isinstance(data[key], str):
            raise _bad(f"{key} must be a string")
    if data["engine"] not in ENGINES:
        raise _bad(f"engine must be one of {', '.join(ENGINES)}")
    check_only: bool = data["check_only"]
    if not check_only:
        if not data["model"]:
            raise _bad("model must name a file")
        if not data["output"]:
            raise _bad("output must name a file")
    methods = data["methods"]
    if methods is not None:
        if not isinstance(methods, list) or not methods:
            raise _bad("methods must be null or a non-empty list of names")
        for name in methods:
            if not isinstance(name, str) or not _METHOD_NAME.fullmatch(name):
                raise _bad(f"method name {name!r} is not an identifier")
        if len(set(methods)) != len(methods):
            raise _bad("methods repeats a name")
    budget = data["budget_bytes"]
    budget_value = None if budget is None else parse_budget_bytes(budget)
    reference = _reference(data["reference"])
    if reference is not None and check_only:
        raise _bad("reference must be null with check_only")
    return Request(
        model=data["model"],
        output=data["output"],
        methods=list(methods) if methods is not None else None,
        budget_bytes=budget_value,
        zero_copy_kv=data["zero_copy_kv"],
        allow_pickle=data["allow_pickle"],
        check_only=check_only,
        engine=data["engine"],
        reference=reference,
    )


def _reference(value: Any) -> ReferenceRequest | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"path", "steps", "program"}:
        raise _bad("reference must be null or {path, steps, program}")
    steps = value["steps"]
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_REFERENCE_STEPS:
        raise _bad(f"reference.steps must be an integer from 1 to {MAX_REFERENCE_STEPS}")
    for key in ("path", "program"):
        if not isinstance(value[key], str) or not value[key]:
            raise _bad(f"reference.{key} must be a non-empty string")
    return ReferenceRequest(path=value["path"], steps=steps, program=value["program"])
