// The size vectors every reader of a byte count must judge alike
// (test/vectors/sizes.json, hand-written: each vector is a statement of the
// contract; the grammars are in its README). The TypeScript readers here:
// `size` is readSize (every trtx flag that takes bytes), `byte_count` is
// readByteCount (a compile spec's budget, the runtime's reading), `request`
// is the bridge protocol's DecimalBytes (zod) and the JSON Schema generated
// from it. The bridge reads `byte_count` and `request` in
// python-bridge/tests/test_size_vectors.py, the runner `byte_count` in
// native-runner/tests/byte_count_vectors_test.cpp.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DecimalBytes } from '../src/bridge/protocol.js';
import { decodeBudget } from '../src/tensorrt/compile-specs.js';
import { readByteCount } from '../src/util/byte-count.js';
import { parseSize, readSize } from '../src/util/size.js';
import { REPO } from './helpers/bridge.js';
import { validate } from './helpers/json-schema.js';

type Outcome = { bytes: string } | { refused: string };
interface Vector {
  name: string;
  text: string;
  size: Outcome;
  byte_count: Outcome;
  request: Outcome;
}

const doc = JSON.parse(readFileSync(join(REPO, 'test', 'vectors', 'sizes.json'), 'utf8')) as { version: number; vectors: Vector[] };
const schema = JSON.parse(readFileSync(join(REPO, 'schemas', 'bridge-protocol.schema.json'), 'utf8')) as Record<string, unknown>;

const outcome = (read: bigint | string): Outcome => (typeof read === 'bigint' ? { bytes: read.toString() } : { refused: read });

describe('test/vectors/sizes.json', () => {
  it('is version 1 with uniquely named vectors, each judged by the three grammars', () => {
    expect(doc.version).toBe(1);
    expect(new Set(doc.vectors.map((v) => v.name)).size).toBe(doc.vectors.length);
    for (const v of doc.vectors) expect(Object.keys(v).filter((k) => ['size', 'byte_count', 'request'].includes(k))).toHaveLength(3);
    // Each grammar refuses some and accepts some, so no reader passes by refusing everything.
    for (const g of ['size', 'byte_count', 'request'] as const) {
      expect(doc.vectors.filter((v) => 'bytes' in v[g]).length, g).toBeGreaterThan(3);
      expect(doc.vectors.filter((v) => 'refused' in v[g]).length, g).toBeGreaterThan(10);
    }
  });

  it.each(doc.vectors.map((v) => [v.name, v] as const))('%s', (_name, v) => {
    expect(outcome(readSize(v.text)), 'size').toEqual(v.size);
    if ('bytes' in v.size) expect(parseSize(v.text).toString()).toBe(v.size.bytes);
    else expect(() => parseSize(v.text)).toThrow(expect.objectContaining({ code: 'SIZE_INVALID' }));

    const bytes = new TextEncoder().encode(v.text);
    expect(outcome(readByteCount(bytes)), 'byte_count').toEqual(v.byte_count);
    if ('bytes' in v.byte_count) expect(decodeBudget(bytes).toString()).toBe(v.byte_count.bytes);
    else expect(() => decodeBudget(bytes)).toThrow(expect.objectContaining({ code: 'SPEC_BUDGET_INVALID' }));

    const zod = DecimalBytes.safeParse(v.text);
    expect(zod.success ? { bytes: BigInt(zod.data).toString() } : { refused: 'invalid' }, 'request').toEqual(v.request);
  });

  it('the generated JSON Schema judges `request` as zod does', () => {
    for (const v of doc.vectors) {
      const ok = validate(schema, v.text, { $ref: '#/$defs/decimalBytes' }).length === 0;
      expect(ok ? 'ok' : 'refused', v.name).toBe('bytes' in v.request ? 'ok' : 'refused');
    }
  });
});
