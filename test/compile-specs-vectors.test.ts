// The compile-spec vectors every reader of trtx's compile specs must judge
// alike (test/vectors/compile-specs.json, hand-written: each vector is a
// statement of the contract). This is the TypeScript reader
// (decodeCompileSpecs); the native runner's parse_trt_compile_specs reads
// the same file in native-runner/tests/compile_spec_vectors_test.cpp.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeCompileSpecs, type CompileSpecEntry } from '../src/tensorrt/compile-specs.js';
import { canonicalTargetDevice } from '../src/tensorrt/target-device.js';
import { REPO } from './helpers/bridge.js';

interface Vector {
  name: string;
  specs: ({ key: string; value: string } | { key: string; hex: string })[];
  expect?: { target?: string; budget?: string; zero_copy_kv?: string[] };
  warnings?: string[];
  refused?: string;
}

const FILE = join(REPO, 'test', 'vectors', 'compile-specs.json');
const doc = JSON.parse(readFileSync(FILE, 'utf8')) as { version: number; vectors: Vector[] };

const entry = (s: Vector['specs'][number]): CompileSpecEntry => ({
  key: s.key,
  value: 'hex' in s ? Uint8Array.from(Buffer.from(s.hex, 'hex')) : new TextEncoder().encode(s.value),
});

describe('test/vectors/compile-specs.json', () => {
  it('is version 1 with uniquely named vectors, each either decoded or refused', () => {
    expect(doc.version).toBe(1);
    expect(new Set(doc.vectors.map((v) => v.name)).size).toBe(doc.vectors.length);
    for (const v of doc.vectors) expect(v.name, v.name).toSatisfy(() => (v.expect === undefined) !== (v.refused === undefined));
    expect(doc.vectors.filter((v) => v.refused).length).toBeGreaterThan(20);
  });

  it.each(doc.vectors.map((v) => [v.name, v] as const))('%s', (_name, v) => {
    const { specs, diagnostics } = decodeCompileSpecs(v.specs.map(entry));
    const errors = diagnostics.filter((d) => d.severity === 'error').map((d) => d.code);
    if (v.refused !== undefined) {
      expect(errors).toEqual([v.refused]);
      return;
    }
    expect(errors).toEqual([]);
    expect(diagnostics.map((d) => d.code)).toEqual(v.warnings ?? []);
    expect({
      target: specs.target && canonicalTargetDevice(specs.target),
      budget: specs.weightStreamingBudget?.toString(),
      zero_copy_kv: specs.zeroCopyKv,
    }).toEqual({ target: v.expect?.target, budget: v.expect?.budget, zero_copy_kv: v.expect?.zero_copy_kv });
  });
});
