// The `target_device` compile spec, read as ExecuTorch reads it.
//
// ExecuTorch's PropagateDevicePass places a delegate's I/O by this value
// (pytorch/executorch exir/passes/propagate_device_pass.py,
// _parse_device_spec_value): it decodes UTF-8, strips surrounding whitespace,
// lower-cases, splits at the first ':' and reads the rest with Python's int(),
// and the type must name a DeviceType (cpu or cuda, exir/schema.py); a value
// without ':' means index 0. Torch-TensorRT's runtime never reads the spec (its
// engine runs on the blob's device_id, TensorRTBackend.cpp init), so a program
// whose tensors were placed by any value ExecuTorch accepts runs as written.
//
// trtx therefore accepts what that parser accepts, with a warning for every
// form other than `cuda:N`, except where the value would fail later:
//   - a negative index (ExecuTorch takes `cuda:-1`; the device allocator then
//     fails at load) and an index past 127 (`device_index` is a signed byte in
//     schema/program.fbs, so the program cannot even be serialized);
//   - deliberately stricter: non-ASCII spaces and digits, which Python's
//     strip() and int() also take (`cuda:١`), are refused.

import { bytesToLatin1 } from '../util/arrays.js';

export type DeviceKind = 'cuda' | 'cpu';

export interface TargetDevice {
  type: DeviceKind;
  index: number;
  /** Written exactly `cuda:N` (or `cpu:N`) with N in plain decimal. */
  canonical: boolean;
}

/** Largest device index the program schema can hold (`device_index: byte`). */
export const MAX_DEVICE_INDEX = 127;

// What Python's str.strip() and int() treat as whitespace among ASCII characters.
// eslint-disable-next-line no-control-regex -- Python's whitespace includes the separators \x1c-\x1f
const ASCII_SPACE = /^[ \t\n\v\f\r\x1c-\x1f]+|[ \t\n\v\f\r\x1c-\x1f]+$/g;
// Python int(): optional sign, digits with single underscores between them.
const PY_INT = /^[+-]?[0-9](?:_?[0-9])*$/;

/**
 * Reads a target_device value; returns the device or a sentence saying why it
 * is refused. Never builds a string from more than 64 bytes.
 */
export function readTargetDevice(value: Uint8Array): TargetDevice | string {
  if (value.length > 64) return `is ${value.length} bytes long; a device is a few characters`;
  if (!value.every((b) => b < 0x80)) return 'is not ASCII (ExecuTorch would take some non-ASCII spaces and digits; trtx does not)';
  const raw = bytesToLatin1(value);
  const text = raw.replace(ASCII_SPACE, '').toLowerCase();
  const colon = text.indexOf(':');
  const type = colon < 0 ? text : text.slice(0, colon);
  if (type !== 'cuda' && type !== 'cpu') return `names device type ${JSON.stringify(type)}; ExecuTorch knows cpu and cuda`;
  let index = 0;
  if (colon >= 0) {
    const digits = text.slice(colon + 1).replace(ASCII_SPACE, '');
    if (!PY_INT.test(digits)) return `has index ${JSON.stringify(text.slice(colon + 1))}, which is not a whole number`;
    const n = Number(digits.replace(/_/g, ''));
    if (n < 0) return `has a negative index ${n}; the device allocator fails on it at load`;
    if (n > MAX_DEVICE_INDEX) return `has index ${n}; a program's device_index is a signed byte (at most ${MAX_DEVICE_INDEX})`;
    index = n === 0 ? 0 : n; // -0 is 0
  }
  const canonical = raw === `${type}:${index}`;
  return { type, index, canonical };
}

/** How trtx writes a device: `cuda:N`. */
export function canonicalTargetDevice(d: Pick<TargetDevice, 'type' | 'index'>): string {
  return `${d.type}:${d.index}`;
}
