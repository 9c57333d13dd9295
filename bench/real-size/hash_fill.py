"""Weights that can be made again anywhere from their name alone.

The real-size benchmark's programs are gigabytes, and the GPU machine that
verifies them takes 64 MiB of files and has no ExecuTorch to export with. So
the benchmark's models get weights that are a pure function of (seed,
element index): integer hashing in uint32 arithmetic, exact in numpy on any
machine, scaled by a power of two so every value is exact in float32,
bfloat16 and float16 alike. The program's skeleton (everything but these
weights) travels; `inflate` writes the weights back at their segments and the
file's sha256 proves it is the program that was exported here.

Values are (h >> 24) - 128 scaled by 2^-13: 256 levels in [-1/64, 1/64),
roughly the spread of a freshly initialised decoder's matrices (std 0.009).
"""

from __future__ import annotations

import zlib

import numpy as np

SCALE = 2.0**-13
CHUNK = 1 << 24  # elements per step: bounded memory for a 262M-element embedding


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode("utf-8")) & 0xFFFFFFFF


def values(seed: int, start: int, count: int) -> np.ndarray:
    """float32 values of elements [start, start + count) of the tensor with this seed."""
    i = np.arange(start, start + count, dtype=np.uint64).astype(np.uint32)
    with np.errstate(over="ignore"):
        h = i * np.uint32(0x9E3779B1) + np.uint32((seed * 0x85EBCA77) & 0xFFFFFFFF)
        h ^= h >> np.uint32(15)
        h *= np.uint32(0x2C1B3C6D)
        h ^= h >> np.uint32(12)
    return ((h >> np.uint32(24)).astype(np.int32) - 128).astype(np.float32) * np.float32(SCALE)


def encode(v: np.ndarray, dtype: str) -> bytes:
    """The little-endian bytes of float32 values `v` (exact in each dtype) as `dtype`."""
    if dtype == "float32":
        return v.astype("<f4").tobytes()
    if dtype == "float16":
        return v.astype("<f2").tobytes()
    if dtype == "bfloat16":
        # The top half of the float32 bits: exact, since every value has at most 8 significant bits.
        return (v.astype("<f4").view("<u4") >> np.uint32(16)).astype("<u2").tobytes()
    raise ValueError(f"no hash fill for {dtype}")


def chunks(seed: int, numel: int, dtype: str):
    """The tensor's bytes in pieces of at most CHUNK elements."""
    for start in range(0, numel, CHUNK):
        yield encode(values(seed, start, min(CHUNK, numel - start)), dtype)
