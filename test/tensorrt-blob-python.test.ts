// Property tests: trtx's TypeScript reader and writer and the native runner's
// C++ blob parser agree with blobs laid out by the project's Python copy of
// Torch-TensorRT's serializer (python-bridge/trtx_bridge/tensorrt_blob.py), on
// random binding lists: names with non-ASCII and control characters, empty
// lists, aliases, device ids. fast-check draws a batch of cases, one Python
// process serializes the whole batch, one runner process parses it.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeBlobMetadata, inputs, layoutBlobHead, outputs, parseBlob, writeBlob, type MetadataInit } from '../src/tensorrt/blob.js';
import { readLikeUpstream } from '../src/tensorrt/upstream-reading.js';
import { PYTHON, REPO } from './helpers/bridge.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';
import { codeOf } from './helpers/refusal.js';

interface Case {
  io_bindings: { name: string; is_input: boolean; dtype?: string; shape?: number[] }[];
  aliased_io: [string, string, string][];
  hardware_compatible: boolean;
  device_id: number;
  serialized_metadata: string;
  target_platform: string;
  engine_hex: string;
}

const BRIDGE = join(REPO, 'python-bridge');

/** The Python serializer over a batch: one process, one blob per case. */
function pythonBlobs(cases: Case[]): Uint8Array[] {
  const run = spawnSync(PYTHON, ['-m', 'trtx_bridge.tensorrt_blob'], {
    cwd: BRIDGE,
    env: { ...process.env, PYTHONPATH: BRIDGE, PYTHONDONTWRITEBYTECODE: '1' },
    input: JSON.stringify(cases),
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  expect(run.status, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as string[]).map((h) => new Uint8Array(Buffer.from(h, 'hex')));
}

/** The runner's verdict on each blob, through its parse-blob-vectors subcommand. */
function runnerVerdicts(runner: string, blobs: Uint8Array[]): string[] {
  const file = join(tempDir('blob-python'), 'vectors.json');
  const vectors = blobs.map((b, i) => ({ name: `case${i}`, hex: Buffer.from(b).toString('hex'), expect: 'ok' }));
  writeFileSync(file, JSON.stringify({ version: 1, vectors }));
  const run = spawnSync(runner, ['parse-blob-vectors', file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  // Exit 1 only says some verdict differs from "ok"; the report has each one.
  expect([0, 1], run.stderr).toContain(run.status);
  return (JSON.parse(run.stdout) as { vectors: { actual: string }[] }).vectors.map((v) => v.actual);
}

// Names: plain identifiers like the real export's, and anything else a
// tensor could be called, control characters and NUL included.
const nameArb = fc.oneof(
  fc.constantFrom('x', 'input_pos', 'b_layers_0_attn_k_cache', 'output0', 'output1', 'device_id', 'aliased_io'),
  fc.string({ unit: fc.constantFrom('a', 'Z', '_', '0', '"', '\\', '/', ' ', ':', ',', '[', '{'), minLength: 1, maxLength: 8 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }),
  fc.string({
    unit: fc.constantFrom('a', '\n', '\t', '\u0001', '\u001f', '\u007f', '\u0000', 'é', '出', '\u{1F600}'),
    minLength: 1,
    maxLength: 5,
  }),
);

const caseArb: fc.Arbitrary<Case> = fc
  .array(fc.record({ name: nameArb, is_input: fc.boolean(), typed: fc.boolean() }), { maxLength: 6 })
  .chain((bindings) => {
    const ins = bindings.filter((b) => b.is_input).map((b) => b.name);
    const outs = bindings.filter((b) => !b.is_input).map((b) => b.name);
    const alias: fc.Arbitrary<[string, string, string] | null> =
      ins.length && outs.length
        ? fc.tuple(fc.constantFrom(...outs), fc.constantFrom(...ins), fc.constantFrom<string>('kv_cache_update', 'user'))
        : fc.constant(null);
    return fc.record({
      io_bindings: fc.constant(
        bindings.map((b) =>
          b.typed ? { name: b.name, is_input: b.is_input, dtype: 'float16', shape: [1, -1, 8] } : { name: b.name, is_input: b.is_input },
        ),
      ),
      aliased_io: fc.array(alias, { maxLength: 3 }).map((a) => a.filter((x): x is [string, string, string] => x !== null)),
      hardware_compatible: fc.boolean(),
      device_id: fc.integer({ min: 0, max: 7 }),
      serialized_metadata: fc.oneof(fc.constant(''), fc.string({ unit: 'binary', maxLength: 12 })),
      target_platform: fc.constantFrom('', 'linux_x86_64'),
      engine_hex: fc.uint8Array({ maxLength: 24 }).map((e) => Buffer.from(e).toString('hex')),
    });
  });

/** The case as trtx's writer takes it; aliased_io keeps one entry per output, as the serializer's dict does. */
function metadataOf(c: Case): MetadataInit {
  const byOutput = new Map<string, [string, string]>();
  for (const [o, i, k] of c.aliased_io) byOutput.set(o, [i, k]);
  return {
    io_bindings: c.io_bindings.map((b) => ({ name: b.name, dtype: b.dtype ?? '', shape: b.shape ?? [], is_input: b.is_input })),
    aliased_io: [...byOutput].map(([output, [input, kind]]) => ({ output, input, kind: kind as 'kv_cache_update' | 'user' })),
    hardware_compatible: c.hardware_compatible,
    device_id: c.device_id,
    serialized_metadata: c.serialized_metadata,
    target_platform: c.target_platform,
  };
}

const printableAscii = (s: string) => /^[\x20-\x7e]*$/.test(s);

describe('blobs from the Python serializer', () => {
  it('the TypeScript reader and writer and the C++ parser agree with every one', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const runner = await testRunner();
    let accepted = 0;
    let escapedRefused = 0;
    fc.assert(
      fc.property(fc.array(caseArb, { minLength: 60, maxLength: 60 }), (cases) => {
        const blobs = pythonBlobs(cases);
        const native = runnerVerdicts(runner, blobs);
        cases.forEach((c, k) => {
          const py = blobs[k];
          const meta = metadataOf(c);
          const engine = new Uint8Array(Buffer.from(c.engine_hex, 'hex'));
          const magic = meta.aliased_io!.length > 0 ? 'TR02' : 'TR01';

          // Layout: byte for byte the serializer's, whatever the metadata says.
          const head = layoutBlobHead(magic, encodeBlobMetadata(meta), engine.length);
          expect(Buffer.from(py).equals(Buffer.concat([head, engine])), `case ${k}: layout`).toBe(true);

          // Reader, writer and runner reach one verdict.
          const read = codeOf(() => parseBlob(py));
          expect(native[k], `case ${k}: C++ parser vs TypeScript reader`).toBe(read);
          expect(
            codeOf(() => writeBlob({ metadata: meta, engine })),
            `case ${k}: TypeScript writer`,
          ).toBe(read);

          const names = c.io_bindings.map((b) => b.name);
          if (read === 'ok') {
            accepted++;
            // What trtx accepts, Torch-TensorRT's parser reads the same way, and the writer reproduces.
            expect(Buffer.from(writeBlob({ metadata: meta, engine })).equals(Buffer.from(py))).toBe(true);
            const p = parseBlob(py);
            expect(p.metadata).toEqual(meta);
            const u = readLikeUpstream(py.subarray(p.metadataOffset, p.metadataOffset + p.metadataSize));
            expect(u.ok && u.entries.map((e) => e.name)).toEqual(names);
            expect([inputs(p.metadata).length, outputs(p.metadata).length]).toEqual([
              c.io_bindings.filter((b) => b.is_input).length,
              c.io_bindings.filter((b) => !b.is_input).length,
            ]);
            expect(names.every(printableAscii)).toBe(true);
          } else if (!names.every(printableAscii)) {
            // json.dumps escapes such a name and upstream does not decode it: never accepted.
            if (read === 'TRT_NAME_ESCAPED') escapedRefused++;
          } else {
            // Plain names are never refused as escaped (a duplicate or a key collision still is).
            expect(read).not.toBe('TRT_NAME_ESCAPED');
          }
        });
      }),
      { numRuns: 6 },
    );
    // Both branches ran: the property is not vacuous.
    expect(accepted).toBeGreaterThan(20);
    expect(escapedRefused).toBeGreaterThan(20);
  });

  it(
    'an empty binding list (names are then taken from the engine upstream) is accepted by all three',
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      const c: Case = {
        io_bindings: [],
        aliased_io: [],
        hardware_compatible: false,
        device_id: 3,
        serialized_metadata: '',
        target_platform: '',
        engine_hex: '66747274',
      };
      const [py] = pythonBlobs([c]);
      expect(codeOf(() => parseBlob(py))).toBe('ok');
      expect(runnerVerdicts(await testRunner(), [py])).toEqual(['ok']);
      expect(
        Buffer.from(writeBlob({ metadata: metadataOf(c), engine: new Uint8Array([0x66, 0x74, 0x72, 0x74]) })).equals(Buffer.from(py)),
      ).toBe(true);
    },
  );
});
