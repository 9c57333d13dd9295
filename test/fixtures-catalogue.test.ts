// Every catalogue file is written, read back by trtx and decoded by Debian's
// flatc against schemas/program.fbs; every TensorRT delegate in a sound file
// carries a blob that parses, a reference engine that agrees with its
// bindings, and compile specs that decode clean; a broken file with a known
// refusal code gets exactly that refusal.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFixture } from '../src/examples/builder.js';
import { BLOB_FAULTS } from '../src/examples/broken.js';
import { CATALOGUE } from '../src/examples/catalogue.js';
import { DataLocation } from '../src/pte/model.js';
import { openPte } from '../src/pte/open.js';
import { BLOB_ERROR_CODES, engineBytes, parseBlob, TRT_BACKEND_ID } from '../src/tensorrt/blob.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { decodeEngine } from '../src/tensorrt/standin-engine.js';
import { checkEngineBindings } from '../src/tensorrt/standin-engine-bindings.js';
import { TrtxError } from '../src/util/errors.js';
import { flatcDecode } from './helpers/flatc.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('catalogue');

const REQUIRED = [
  'trt-single.pte',
  'multi-engine.pte',
  'trt-beside-cuda.pte',
  'kv-decode-staged.pte',
  'kv-decode-zero-copy.pte',
  'mixed-conv-state-one-delegate-staged.pte',
  'mixed-conv-state-one-delegate-zero-copy.pte',
  'mixed-conv-state-split-staged.pte',
  'mixed-conv-state-split-zero-copy.pte',
  'broken-partial-elision.pte',
  'broken-host-planned-arena.pte',
  'broken-leftover-staging-copy.pte',
  'broken-cache-overlaps-activation.pte',
  'broken-swapped-caches.pte',
  'broken-writeback-into-zero-copy-cache.pte',
  'broken-lost-update.pte',
  'broken-zero-copy-no-outputs-left.pte',
  'broken-budget-spec.pte',
  'broken-duplicate-spec-key.pte',
  'broken-arity.pte',
];

describe('catalogue', () => {
  it('names every required sound program and broken shape, each once', () => {
    const files = CATALOGUE.map((e) => e.file);
    expect(new Set(files).size).toBe(files.length);
    for (const f of REQUIRED) expect(files).toContain(f);
  });

  it('has one broken-blob file per blob refusal the parser makes', () => {
    const codes = CATALOGUE.filter((e) => e.file.startsWith('broken-blob-')).map((e) => e.expect?.code);
    expect(new Set(codes)).toEqual(new Set(BLOB_ERROR_CODES));
    expect(Object.keys(BLOB_FAULTS).length).toBe(BLOB_ERROR_CODES.length);
  });

  it('marks broken files as such, each with a twin in the catalogue and the rule it breaks', () => {
    const files = new Set(CATALOGUE.map((e) => e.file));
    for (const e of CATALOGUE) {
      expect(e.expect, e.file).toBeDefined();
      expect(e.expect!.sound, e.file).toBe(!e.file.startsWith('broken-'));
      if (e.expect!.twin) expect(files.has(e.expect!.twin), `${e.file} twin`).toBe(true);
      if (!e.expect!.sound) {
        expect(e.expect!.twin, e.file).toBeDefined();
        expect(e.expect!.breaks, e.file).toBeTruthy();
        expect(CATALOGUE.find((x) => x.file === e.expect!.twin)!.expect!.sound).toBe(true);
      }
    }
  });
});

describe.each(CATALOGUE.map((e) => [e.file, e] as const))('%s', (file, entry) => {
  it('writes, reads back, decodes with flatc, and its TensorRT delegates are what it says', async () => {
    const path = join(dir, file);
    const { built } = await writeFixture(path, entry.build());
    const pte = await openPte(path);
    try {
      const json = flatcDecode(pte.programBytes) as { execution_plan: { name: string; chains: { instructions: unknown[] }[] }[] };
      expect(json.execution_plan.map((p) => p.name)).toEqual(built.program.executionPlan.map((p) => p.name));
      json.execution_plan.forEach((p, i) =>
        expect(p.chains[0].instructions.length).toBe(built.program.executionPlan[i].chains[0].instructions.length),
      );

      const refusals: string[] = [];
      let trtDelegates = 0;
      for (const plan of pte.program.executionPlan) {
        for (const [di, d] of plan.delegates.entries()) {
          if (d.id !== TRT_BACKEND_ID) continue;
          trtDelegates++;
          expect(d.processed!.location).toBe(DataLocation.SEGMENT);
          const seg = pte.segments[d.processed!.index];
          const blob = await pte.readRange(seg.offset, seg.size);
          const where = `${plan.name} delegate ${di}`;
          try {
            const parsed = parseBlob(blob, undefined, { location: where });
            const engine = decodeEngine(engineBytes(blob, parsed), { location: where });
            checkEngineBindings(engine, parsed.metadata.io_bindings, { location: where });
          } catch (e) {
            if (!(e instanceof TrtxError)) throw e;
            refusals.push(e.code);
          }
          refusals.push(
            ...decodeCompileSpecs(d.compileSpecs)
              .diagnostics.filter((x) => x.severity === 'error')
              .map((x) => x.code),
          );
        }
      }
      expect(trtDelegates).toBeGreaterThan(0);
      expect(refusals).toEqual(entry.expect?.code ? [entry.expect.code] : []);
    } finally {
      await pte.close();
    }
  });
});
