"""The compile specs trtx owns on a TensorRT delegate, read as the runtime reads them.

The bridge's reader of ``target_device``, ``weight_streaming_budget`` and
``zero_copy_kv`` (docs/file-format.md), rule for rule the TypeScript
``decodeCompileSpecs`` (src/tensorrt/compile-specs.ts, whose comments cite the
upstream source of each rule) and the runner's ``parse_trt_compile_specs``.
All three judge test/vectors/compile-specs.json alike, and the budget's digits
test/vectors/sizes.json (``byte_count``); python-bridge/tests runs both here.

Nothing here imports torch or executorch: specs are ``(key, value bytes)`` pairs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

TARGET_DEVICE = "target_device"
WEIGHT_STREAMING_BUDGET = "weight_streaming_budget"
ZERO_COPY_KV = "zero_copy_kv"

BYTE_COUNT_LIMIT = 1 << 63
MAX_DEVICE_INDEX = 127

# What Python's str.strip() and int() treat as whitespace among ASCII
# characters; ExecuTorch's _parse_device_spec_value strips them
# (exir/passes/propagate_device_pass.py). trtx refuses non-ASCII values, which
# that parser would also strip or read as digits.
_ASCII_SPACE = " \t\n\v\f\r\x1c\x1d\x1e\x1f"
# int(): an optional sign, then digits with single underscores between them.
_PY_INT = re.compile(r"[+-]?[0-9](?:_?[0-9])*")


def read_byte_count(value: bytes) -> int | str:
    """A budget's bytes as std::from_chars reads them into int64, then "not
    negative" (WeightStreamingBudget.cpp): the count, or the problem's name
    (src/util/byte-count.ts): empty, no_digits, not_digits, range, negative."""
    if not value:
        return "empty"
    neg = value[:1] == b"-"
    digits = value[1:] if neg else value
    if not digits:
        return "no_digits"
    # bytes.isdigit() is ASCII-only; int() alone would take "1_0" and " 1".
    if not digits.isdigit():
        return "not_digits"
    # Past 19 significant digits the magnitude is past 2^63 (and int() of
    # thousands of digits is refused by Python itself).
    if len(digits.lstrip(b"0")) > 19:
        return "range"
    n = int(digits)
    if neg:
        # -2^63 is INT64_MIN, which from_chars reads; past it is out of range.
        return 0 if n == 0 else "negative" if n <= BYTE_COUNT_LIMIT else "range"
    return n if n < BYTE_COUNT_LIMIT else "range"


@dataclass(frozen=True)
class TargetDevice:
    type: str
    index: int
    canonical: bool

    def __str__(self) -> str:
        return f"{self.type}:{self.index}"


def read_target_device(value: bytes) -> TargetDevice | str:
    """A target_device as ExecuTorch reads it, or why it is refused."""
    if len(value) > 64:
        return f"is {len(value)} bytes long; a device is a few characters"
    if any(b >= 0x80 for b in value):
        return "is not ASCII"
    raw = value.decode("ascii")
    text = raw.strip(_ASCII_SPACE).lower()
    kind, colon, rest = text.partition(":")
    if kind not in ("cuda", "cpu"):
        return f"names device type {kind!r}; ExecuTorch knows cpu and cuda"
    index = 0
    if colon:
        digits = rest.strip(_ASCII_SPACE)
        if not _PY_INT.fullmatch(digits):
            return f"has index {rest!r}, which is not a whole number"
        index = int(digits)
        if index < 0:
            return f"has a negative index {index}; the device allocator fails on it at load"
        if index > MAX_DEVICE_INDEX:
            return f"has index {index}; a program's device_index is a signed byte"
    return TargetDevice(kind, index, raw == f"{kind}:{index}")


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a repeated key")
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_zero_copy_kv(value: bytes) -> list[str] | str:
    """The JSON list of elided output names (strict RFC 8259), or why not."""
    try:
        text = value.decode("utf-8")
        if text.startswith("\ufeff"):
            return "starts with a byte order mark"
        doc = json.loads(text, object_pairs_hook=_no_repeats, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return f"is not strict JSON: {exc}"
    if not isinstance(doc, list):
        return "must be a JSON list of binding names"
    if not doc:
        return "lists no binding"
    seen: set[str] = set()
    for i, name in enumerate(doc):
        if not isinstance(name, str):
            return f"entry {i} is not a string"
        if not name:
            return f"entry {i} is an empty name"
        if "\0" in name:
            return f"entry {i} contains a NUL character"
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            return f"entry {i} has an unpaired surrogate"
        if name in seen:
            return f"names {name!r} twice"
        seen.add(name)
    return doc


@dataclass
class Finding:
    severity: str  # "error" or "warning"
    code: str
    message: str


@dataclass
class DecodedSpecs:
    target: TargetDevice | None = None
    budget: int | None = None
    zero_copy_kv: list[str] | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]


def decode_compile_specs(specs: Iterable[tuple[str | None, bytes]]) -> DecodedSpecs:
    """Types the owned keys of one delegate's spec list; every problem is a
    finding, in the order decodeCompileSpecs reports it. The first entry of a
    repeated key is the one read (a warning), except a repeated budget (the
    runtime refuses it) and zero_copy_kv repeated with another value."""
    out = DecodedSpecs()
    by_key: dict[str, list[tuple[int, bytes]]] = {}
    for i, (key, value) in enumerate(specs):
        if key is not None:
            by_key.setdefault(key, []).append((i, bytes(value)))
    unusable: set[str] = set()
    for key, entries in by_key.items():
        first = entries[0][1]
        for i, value in entries[1:]:
            if key == WEIGHT_STREAMING_BUDGET:
                unusable.add(key)
                out.findings.append(Finding("error", "SPEC_BUDGET_DUPLICATE", f"compile_specs[{i}] repeats the budget"))
            elif key == ZERO_COPY_KV and value != first:
                unusable.add(key)
                out.findings.append(
                    Finding("error", "SPEC_ZERO_COPY_KV_INVALID", f"compile_specs[{i}] repeats zero_copy_kv with another value")
                )
            else:
                out.findings.append(Finding("warning", "SPEC_DUPLICATE_KEY", f"compile_specs[{i}] repeats {key!r}"))
    for key, read in ((TARGET_DEVICE, _target), (WEIGHT_STREAMING_BUDGET, _budget), (ZERO_COPY_KV, _zero_copy)):
        if key in by_key and key not in unusable:
            read(out, by_key[key][0][1])
    return out


def _target(out: DecodedSpecs, value: bytes) -> None:
    read = read_target_device(value)
    if isinstance(read, str):
        out.findings.append(Finding("error", "SPEC_TARGET_DEVICE_INVALID", f"target_device {value!r} {read}"))
        return
    out.target = read
    if read.type == "cpu" or not read.canonical:
        out.findings.append(Finding("warning", "SPEC_TARGET_DEVICE_FORM", f"target_device {value!r} is read as {read}"))


def _budget(out: DecodedSpecs, value: bytes) -> None:
    read = read_byte_count(value)
    if isinstance(read, str):
        out.findings.append(Finding("error", "SPEC_BUDGET_INVALID", f"weight_streaming_budget {value!r}: {read}"))
        return
    out.budget = read
    if value != str(read).encode("ascii"):
        out.findings.append(Finding("warning", "SPEC_BUDGET_FORM", f"weight_streaming_budget {value!r} is read as {read}"))


def _zero_copy(out: DecodedSpecs, value: bytes) -> None:
    read = read_zero_copy_kv(value)
    if isinstance(read, str):
        out.findings.append(Finding("error", "SPEC_ZERO_COPY_KV_INVALID", f"zero_copy_kv {read}"))
        return
    out.zero_copy_kv = read


def spec_pairs(compile_specs: Sequence[object]) -> list[tuple[str | None, bytes]]:
    """ExecuTorch CompileSpec objects (``key``, ``value``) as pairs."""
    return [(getattr(s, "key", None), bytes(getattr(s, "value", b""))) for s in compile_specs]
