import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SPEC_TARGET_DEVICE,
  SPEC_WEIGHT_STREAMING_BUDGET,
  SPEC_ZERO_COPY_KV,
  decodeBudget,
  decodeCompileSpecs,
  decodeTargetDevice,
  decodeZeroCopyKv,
  encodeBudget,
  encodeTargetDevice,
  encodeZeroCopyKv,
  getSpec,
  removeSpec,
  setSpec,
  type CompileSpecEntry,
} from '../src/tensorrt/compile-specs.js';
import { refusal } from './helpers/refusal.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const spec = (key: string | null, value: string | Uint8Array): CompileSpecEntry => ({
  key,
  value: typeof value === 'string' ? enc.encode(value) : value,
});

describe('weight_streaming_budget', () => {
  it.each([
    ['0', 0n],
    ['8589934592', 8589934592n],
    ['9223372036854775807', (1n << 63n) - 1n],
    ['0008', 8n],
    ['00000000000000000000000000001', 1n],
    // std::from_chars into int64 reads a minus sign; the value is not negative.
    ['-0', 0n],
    ['-000', 0n],
  ])('decodes %j', (text, want) => {
    expect(decodeBudget(enc.encode(text))).toBe(want);
  });

  it.each([
    ['empty', ''],
    ['2^63', '9223372036854775808'],
    ['2^64', '18446744073709551616'],
    ['twenty digits', '99999999999999999999'],
    ['minus', '-1'],
    ['minus alone', '-'],
    ['minus minus zero', '--0'],
    ['plus', '+8'],
    ['leading space', ' 8'],
    ['trailing space', '8 '],
    ['trailing NUL', '8\0'],
    ['inner NUL', '8\x009'],
    ['unit', '8GiB'],
    ['hex', '0x10'],
    ['fraction', '1.5'],
    ['exponent', '1e9'],
    ['word', 'auto'],
    ['full-width digit', '\uff18'],
  ])('refuses %s', (_what, text) => {
    const e = refusal(() => decodeBudget(enc.encode(text), 'here'));
    expect(e.code).toBe('SPEC_BUDGET_INVALID');
    expect(e.location).toBe('here');
    expect(e.kind).toBe('check');
  });

  it('encodes plain decimal ASCII and round-trips over [0, 2^63)', () => {
    expect(dec.decode(encodeBudget(8n * 2n ** 30n))).toBe('8589934592');
    expect(dec.decode(encodeBudget(0n))).toBe('0');
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 63n) - 1n }), (n) => {
        expect(decodeBudget(encodeBudget(n))).toBe(n);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses to encode a value outside [0, 2^63), with the status of its code (flags are checked before: SIZE_INVALID)', () => {
    for (const n of [-1n, 1n << 63n]) {
      const e = refusal(() => encodeBudget(n));
      expect(e.code).toBe('SPEC_BUDGET_INVALID');
      expect(e.kind).toBe('check');
    }
  });
});

describe('target_device', () => {
  // ExecuTorch's _parse_device_spec_value (exir/passes/propagate_device_pass.py):
  // strip, lower-case, split at the first ':', int() the rest; cpu or cuda.
  it.each([
    ['cuda:0', 'cuda', 0, true],
    ['cuda:7', 'cuda', 7, true],
    ['cuda:127', 'cuda', 127, true],
    ['cuda', 'cuda', 0, false],
    ['CUDA:0', 'cuda', 0, false],
    [' cuda:0', 'cuda', 0, false],
    ['cuda:0\n', 'cuda', 0, false],
    ['cuda: 1', 'cuda', 1, false],
    ['cuda:+1', 'cuda', 1, false],
    ['cuda:01', 'cuda', 1, false],
    ['cuda:1_0', 'cuda', 10, false],
    ['cuda:-0', 'cuda', 0, false],
    ['cpu', 'cpu', 0, false],
    ['cpu:0', 'cpu', 0, true],
  ] as const)('reads %j as ExecuTorch does', (text, type, index, canonical) => {
    expect(decodeTargetDevice(enc.encode(text))).toEqual({ type, index, canonical });
  });

  it.each([
    ['empty', ''],
    ['no index after the colon', 'cuda:'],
    ['unknown type', 'gpu0'],
    ['space before the colon', 'cuda :0'],
    ['two colons', 'cuda:0:1'],
    ['fraction', 'cuda:1.0'],
    ['underscore first', 'cuda:_1'],
    ['double underscore', 'cuda:1__0'],
    ['trailing NUL', 'cuda:0\0'],
    ['negative index (ExecuTorch takes it; the device allocator fails at load)', 'cuda:-1'],
    ['past a signed byte (program.fbs device_index)', 'cuda:128'],
    ['huge', 'cuda:99999999999999999'],
    ['non-ASCII digit (ExecuTorch takes it; trtx does not)', 'cuda:\u0661'],
  ])('refuses %s', (_what, text) => {
    expect(refusal(() => decodeTargetDevice(enc.encode(text))).code).toBe('SPEC_TARGET_DEVICE_INVALID');
  });

  it('refuses a huge value without building a string from it', () => {
    expect(refusal(() => decodeTargetDevice(new Uint8Array(1 << 20).fill(0x31))).code).toBe('SPEC_TARGET_DEVICE_INVALID');
  });

  it('encodes and round-trips', () => {
    expect(dec.decode(encodeTargetDevice(3))).toBe('cuda:3');
    expect(decodeTargetDevice(encodeTargetDevice(12))).toEqual({ type: 'cuda', index: 12, canonical: true });
    for (const bad of [-1, 1.5, 128, NaN]) expect(refusal(() => encodeTargetDevice(bad)).code).toBe('SPEC_TARGET_DEVICE_INVALID');
  });
});

describe('zero_copy_kv', () => {
  it('decodes a JSON list of names, compact or spaced', () => {
    expect(decodeZeroCopyKv(enc.encode('["k_out","v_out"]'))).toEqual(['k_out', 'v_out']);
    expect(decodeZeroCopyKv(enc.encode('[ "k_out", "v_out" ]'))).toEqual(['k_out', 'v_out']);
    expect(decodeZeroCopyKv(enc.encode('["caf\\u00e9"]'))).toEqual(['café']);
  });

  it.each([
    ['not JSON', 'k_out,v_out'],
    ['an object', '{"k_out":1}'],
    ['a string', '"k_out"'],
    ['empty list', '[]'],
    ['non-string entry', '["k_out",1]'],
    ['empty name', '["k_out",""]'],
    ['NUL in a name', '["k_out\\u0000"]'],
    ['repeated name', '["k_out","k_out"]'],
    ['trailing bytes', '["k_out"]x'],
    ['invalid UTF-8', new Uint8Array([0x5b, 0x22, 0xff, 0x22, 0x5d])],
  ])('refuses %s', (_what, value) => {
    const e = refusal(() => decodeZeroCopyKv(typeof value === 'string' ? enc.encode(value) : value, 'loc'));
    expect(e.code).toBe('SPEC_ZERO_COPY_KV_INVALID');
    expect(e.location).toBe('loc');
  });

  it('encodes compact JSON (Python-escaped) and round-trips', () => {
    expect(dec.decode(encodeZeroCopyKv(['k_out', 'v_out']))).toBe('["k_out","v_out"]');
    expect(dec.decode(encodeZeroCopyKv(['café']))).toBe('["caf\\u00e9"]');
    expect(decodeZeroCopyKv(encodeZeroCopyKv(['a"b', 'c\\d', '出']))).toEqual(['a"b', 'c\\d', '出']);
    for (const bad of [[], [''], ['a', 'a'], ['a\0'], ['\ud800']]) {
      const e = refusal(() => encodeZeroCopyKv(bad));
      expect(e.code).toBe('SPEC_ZERO_COPY_KV_INVALID');
      // Names come from the program's bindings: a bad one is the program's (exit 1).
      expect(e.kind).toBe('check');
    }
  });
});

describe('decodeCompileSpecs', () => {
  it('types the specs trtx owns and leaves others alone', () => {
    const r = decodeCompileSpecs([
      spec('other_backend_flag', '\x01\x02'),
      spec(SPEC_TARGET_DEVICE, 'cuda:1'),
      spec(SPEC_WEIGHT_STREAMING_BUDGET, '1073741824'),
      spec(SPEC_ZERO_COPY_KV, '["k_out"]'),
      spec(null, 'x'),
    ]);
    expect(r.diagnostics).toEqual([]);
    expect(r.specs).toEqual({
      target: { type: 'cuda', index: 1, canonical: true },
      weightStreamingBudget: 1073741824n,
      zeroCopyKv: ['k_out'],
    });
  });

  it('an absent budget is automatic: no value and no diagnostic', () => {
    const r = decodeCompileSpecs([spec(SPEC_TARGET_DEVICE, 'cuda:0')]);
    expect(r.specs.weightStreamingBudget).toBeUndefined();
    expect(r.diagnostics).toEqual([]);
  });

  it('an unparsable budget is an error, never a silent automatic', () => {
    const r = decodeCompileSpecs([spec(SPEC_TARGET_DEVICE, 'cuda:0'), spec(SPEC_WEIGHT_STREAMING_BUDGET, '8GiB')], {
      location: 'decode > delegate 0 (TensorRTBackend)',
    });
    expect(r.specs.weightStreamingBudget).toBeUndefined();
    expect(r.specs.target).toMatchObject({ type: 'cuda', index: 0 });
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({
      severity: 'error',
      code: 'SPEC_BUDGET_INVALID',
      location: 'decode > delegate 0 (TensorRTBackend) > compile_specs[1] (weight_streaming_budget)',
    });
    expect(r.diagnostics[0].message).toContain('"8GiB"');
    expect(r.diagnostics[0].hint.length).toBeGreaterThan(0);
  });

  it('a repeated budget is an error naming the repeat (Torch-TensorRT refuses it at init), and the budget gets no typed value', () => {
    const r = decodeCompileSpecs([
      spec(SPEC_WEIGHT_STREAMING_BUDGET, '1'),
      spec(SPEC_TARGET_DEVICE, 'cuda:0'),
      spec(SPEC_WEIGHT_STREAMING_BUDGET, '2'),
    ]);
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.location])).toEqual([
      ['error', 'SPEC_BUDGET_DUPLICATE', 'compile_specs[2] (weight_streaming_budget)'],
    ]);
    expect(r.diagnostics[0].message).toContain('compile_specs[0]');
    expect(r.specs.weightStreamingBudget).toBeUndefined();
    expect(r.specs.target).toMatchObject({ type: 'cuda', index: 0 });
  });

  it('any other repeated key is a warning and the first entry wins, as in ExecuTorch; null keys are ignored', () => {
    const r = decodeCompileSpecs([
      spec('x', 'a'),
      spec(null, ''),
      spec(SPEC_TARGET_DEVICE, 'cuda:1'),
      spec(null, ''),
      spec('x', 'b'),
      spec(SPEC_TARGET_DEVICE, 'cuda:0'),
    ]);
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.location])).toEqual([
      ['warning', 'SPEC_DUPLICATE_KEY', 'compile_specs[4] (x)'],
      ['warning', 'SPEC_DUPLICATE_KEY', 'compile_specs[5] (target_device)'],
    ]);
    expect(r.specs.target).toMatchObject({ type: 'cuda', index: 1 });
  });

  it('zero_copy_kv repeated: the same value is a warning, another value an error with no typed value', () => {
    const same = decodeCompileSpecs([spec(SPEC_ZERO_COPY_KV, '["o"]'), spec(SPEC_ZERO_COPY_KV, '["o"]')]);
    expect(same.diagnostics.map((d) => [d.severity, d.code])).toEqual([['warning', 'SPEC_DUPLICATE_KEY']]);
    expect(same.specs.zeroCopyKv).toEqual(['o']);
    const other = decodeCompileSpecs([spec(SPEC_ZERO_COPY_KV, '["o"]'), spec(SPEC_ZERO_COPY_KV, '["p"]')]);
    expect(other.diagnostics.map((d) => [d.severity, d.code])).toEqual([['error', 'SPEC_ZERO_COPY_KV_INVALID']]);
    expect(other.specs.zeroCopyKv).toBeUndefined();
  });

  it('unusual spellings upstream reads correctly are warnings, with the value read', () => {
    const r = decodeCompileSpecs([spec(SPEC_TARGET_DEVICE, ' CUDA:0'), spec(SPEC_WEIGHT_STREAMING_BUDGET, '-0')]);
    expect(r.diagnostics.map((d) => [d.severity, d.code])).toEqual([
      ['warning', 'SPEC_TARGET_DEVICE_FORM'],
      ['warning', 'SPEC_BUDGET_FORM'],
    ]);
    expect(r.specs.target).toMatchObject({ type: 'cuda', index: 0 });
    expect(r.specs.weightStreamingBudget).toBe(0n);
    const cpu = decodeCompileSpecs([spec(SPEC_TARGET_DEVICE, 'cpu')]);
    expect(cpu.diagnostics.map((d) => [d.severity, d.code])).toEqual([['warning', 'SPEC_TARGET_DEVICE_FORM']]);
    expect(cpu.specs.target).toEqual({ type: 'cpu', index: 0, canonical: false });
  });

  it('reports each bad spec', () => {
    const r = decodeCompileSpecs([
      spec(SPEC_TARGET_DEVICE, 'gpu0'),
      spec(SPEC_WEIGHT_STREAMING_BUDGET, '-1'),
      spec(SPEC_ZERO_COPY_KV, '[]'),
    ]);
    expect(r.diagnostics.every((d) => d.severity === 'error')).toBe(true);
    expect(r.diagnostics.map((d) => [d.code, d.location])).toEqual([
      ['SPEC_TARGET_DEVICE_INVALID', 'compile_specs[0] (target_device)'],
      ['SPEC_BUDGET_INVALID', 'compile_specs[1] (weight_streaming_budget)'],
      ['SPEC_ZERO_COPY_KV_INVALID', 'compile_specs[2] (zero_copy_kv)'],
    ]);
    expect(r.specs).toEqual({});
  });

  it('never throws on arbitrary specs', () => {
    const key = fc.oneof(fc.constantFrom(SPEC_TARGET_DEVICE, SPEC_WEIGHT_STREAMING_BUDGET, SPEC_ZERO_COPY_KV, 'other'), fc.constant(null));
    fc.assert(
      fc.property(fc.array(fc.record({ key, value: fc.uint8Array({ maxLength: 24 }) }), { maxLength: 6 }), (specs) => {
        const r = decodeCompileSpecs(specs);
        for (const d of r.diagnostics) expect(d.code).toMatch(/^SPEC_/);
      }),
      { numRuns: 500 },
    );
  });
});

describe('setSpec / removeSpec', () => {
  const base = () => [spec('a', '1'), spec(SPEC_WEIGHT_STREAMING_BUDGET, '5'), spec('b', '2')];

  it('replaces in place and keeps every other entry untouched and in order', () => {
    const before = base();
    const after = setSpec(before, SPEC_WEIGHT_STREAMING_BUDGET, encodeBudget(9n));
    expect(after.map((s) => s.key)).toEqual(['a', SPEC_WEIGHT_STREAMING_BUDGET, 'b']);
    expect(dec.decode(after[1].value)).toBe('9');
    expect(after[0]).toBe(before[0]);
    expect(after[2]).toBe(before[2]);
    // the input list is not modified
    expect(dec.decode(before[1].value)).toBe('5');
  });

  it('appends when absent, and keeps extra fields of replaced entries', () => {
    const withExtra = [
      { ...spec('a', '1'), $absent: ['x'] },
      { ...spec(SPEC_TARGET_DEVICE, 'cuda:0'), $absent: ['y'] },
    ];
    const added = setSpec(withExtra, SPEC_WEIGHT_STREAMING_BUDGET, encodeBudget(1n));
    expect(added.map((s) => s.key)).toEqual(['a', SPEC_TARGET_DEVICE, SPEC_WEIGHT_STREAMING_BUDGET]);
    const replaced = setSpec(withExtra, SPEC_TARGET_DEVICE, encodeTargetDevice(1));
    expect(replaced[1]).toEqual({ key: SPEC_TARGET_DEVICE, value: enc.encode('cuda:1'), $absent: ['y'] });
  });

  it('collapses repeats of the key into its first position', () => {
    const dup = [spec(SPEC_WEIGHT_STREAMING_BUDGET, '1'), spec('a', '1'), spec(SPEC_WEIGHT_STREAMING_BUDGET, '2')];
    const after = setSpec(dup, SPEC_WEIGHT_STREAMING_BUDGET, encodeBudget(3n));
    expect(after.map((s) => [s.key, dec.decode(s.value)])).toEqual([
      [SPEC_WEIGHT_STREAMING_BUDGET, '3'],
      ['a', '1'],
    ]);
    expect(decodeCompileSpecs(after).diagnostics).toEqual([]);
  });

  it('removeSpec drops every entry of the key and nothing else', () => {
    const dup = [spec(SPEC_WEIGHT_STREAMING_BUDGET, '1'), spec('a', '1'), spec(SPEC_WEIGHT_STREAMING_BUDGET, '2'), spec('b', '2')];
    const after = removeSpec(dup, SPEC_WEIGHT_STREAMING_BUDGET);
    expect(after).toEqual([dup[1], dup[3]]);
    expect(removeSpec(base(), 'missing')).toEqual(base());
    expect(getSpec(after, SPEC_WEIGHT_STREAMING_BUDGET)).toBeUndefined();
    expect(dec.decode(getSpec(dup, SPEC_WEIGHT_STREAMING_BUDGET))).toBe('1');
  });
});
