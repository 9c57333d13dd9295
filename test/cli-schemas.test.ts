// schemas/check.schema.json and schemas/inspect.schema.json hold the real
// `--json` outputs: every shape the commands print (clean, findings, a file
// that does not parse, a file that cannot be read) validates, and the schemas
// are not vacuous (a damaged document fails). The validator is Ajv in strict
// mode (test/helpers/json-schema.ts), which refuses a keyword it does not
// know, so a schema cannot lean on an unchecked one.
import { beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { CATALOGUE } from '../src/examples/catalogue.js';
import { runCli } from './helpers/cli.js';
import { CORPUS_DIR } from './helpers/corpus.js';
import { validate } from './helpers/json-schema.js';
import { tempDir } from './helpers/temp.js';

const schema = (name: string) =>
  JSON.parse(readFileSync(new URL(`../schemas/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;
const CHECK = schema('check.schema.json');
const INSPECT = schema('inspect.schema.json');

const dir = tempDir('schemas');

// Small programs of every kind the catalogue has: sound, zero-copy, broken
// specs, broken blobs (seed-scale twins left out: same shapes, more bytes).
const files: string[] = [];
beforeAll(async () => {
  for (const e of CATALOGUE.filter((x) => !x.file.includes('-seed-'))) {
    const path = join(dir, e.file);
    await writeFixture(path, e.build());
    files.push(path);
  }
  for (const f of readdirSync(CORPUS_DIR).filter((x) => x.endsWith('.pte'))) files.push(join(CORPUS_DIR, f));
  const bad = Buffer.from(readFileSync(files[0]));
  bad.writeUInt32LE(0x7fffff00, 0);
  writeFileSync(join(dir, 'bad-root.pte'), bad);
  files.push(join(dir, 'bad-root.pte'));
});

async function json(args: string[]): Promise<{ code: number; doc: unknown }> {
  const r = await runCli(args);
  return { code: r.code, doc: JSON.parse(r.stdout) };
}

describe('check.schema.json', () => {
  it('holds `trtx check --json` for every fixture, the corpus and a file that does not parse', async () => {
    const codes = new Set<number>();
    for (const f of files) {
      for (const flags of [[], ['--strict'], ['--zero-copy-kv']]) {
        const { code, doc } = await json(['check', f, '--json', ...flags]);
        codes.add(code);
        expect(validate(CHECK, doc), f).toEqual([]);
      }
    }
    expect([...codes].sort()).toEqual([0, 1]);
  });

  it('holds the error object of an unreadable file (exit 2)', async () => {
    const { code, doc } = await json(['check', join(dir, 'missing.pte'), '--json']);
    expect(code).toBe(2);
    expect(validate(CHECK, doc)).toEqual([]);
  });

  it('holds the several-files document, and refuses it damaged', async () => {
    const arity = files.find((f) => f.endsWith('broken-arity.pte'))!;
    const { code, doc } = await json(['check', files[0], arity, join(dir, 'missing.pte'), '--json']);
    expect(code).toBe(2);
    expect(validate(CHECK, doc)).toEqual([]);
    const many = doc as { files: Record<string, unknown>[]; summary: Record<string, unknown> } & Record<string, unknown>;
    const damaged = [
      { ...many, schema: 'trtx.check/1' },
      { ...many, files: [many.files[0]] },
      { ...many, files: [...many.files.slice(0, 2), { ...many.files[2], ok: true }] },
      { ...many, summary: { ...many.summary, line: '3 files checked' } },
    ].map((d) => JSON.parse(JSON.stringify(d)));
    for (const d of damaged) expect(validate(CHECK, d).length, JSON.stringify(d).slice(0, 80)).toBeGreaterThan(0);
  });

  it('refuses damaged reports', async () => {
    const { doc } = await json(['check', files.find((f) => f.endsWith('broken-arity.pte'))!, '--json']);
    const report = doc as { diagnostics: Record<string, unknown>[]; summary: Record<string, unknown> } & Record<string, unknown>;
    expect(report.diagnostics.length).toBeGreaterThan(0);
    const damaged = [
      { ...report, schema: 'trtx.check/2' },
      { ...report, ok: 'no' },
      { ...report, diagnostics: [{ ...report.diagnostics[0], severity: 'fatal' }] },
      { ...report, diagnostics: [{ ...report.diagnostics[0], hint: undefined }] },
      { ...report, summary: { ...report.summary, line: 'two errors' } },
      { ...report, extra: 1 },
    ].map((d) => JSON.parse(JSON.stringify(d)));
    for (const d of damaged) expect(validate(CHECK, d).length, JSON.stringify(d).slice(0, 80)).toBeGreaterThan(0);
  });
});

describe('inspect.schema.json', () => {
  it('holds `trtx inspect --json` for every fixture and the corpus', async () => {
    for (const f of files.filter((x) => !x.endsWith('bad-root.pte'))) {
      const { code, doc } = await json(['inspect', f, '--json']);
      expect(code, f).toBe(0);
      expect(validate(INSPECT, doc), f).toEqual([]);
    }
  });

  it('holds the outputs with a method picked, and the error objects of exit 1 and 2', async () => {
    const kv = files.find((f) => f.endsWith('kv-decode-zero-copy.pte'))!;
    const one = await json(['inspect', kv, '--method', 'decode', '--json']);
    expect((one.doc as { methods: unknown[] }).methods).toHaveLength(1);
    expect(validate(INSPECT, one.doc)).toEqual([]);
    const bad = await json(['inspect', files.find((f) => f.endsWith('bad-root.pte'))!, '--json']);
    expect(bad.code).toBe(1);
    expect(validate(INSPECT, bad.doc)).toEqual([]);
    const missing = await json(['inspect', join(dir, 'missing.pte'), '--json']);
    expect(missing.code).toBe(2);
    expect(validate(INSPECT, missing.doc)).toEqual([]);
  });

  it('covers decoded specs, spec errors and blob errors (the optional parts)', async () => {
    const text = JSON.stringify(
      await Promise.all(
        ['multi-engine.pte', 'kv-decode-zero-copy.pte', 'broken-budget-spec.pte', 'broken-blob-magic.pte'].map(
          async (n) => (await json(['inspect', join(dir, n), '--json'])).doc,
        ),
      ),
    );
    for (const part of [
      '"budget_bytes"',
      '"target_device"',
      '"zero_copy_kv"',
      '"error":"weight_streaming_budget',
      '"tensorrt":{"error"',
      '"aliased":[{',
    ])
      expect(text).toContain(part);
  });

  it('refuses damaged reports', async () => {
    const { doc } = await json(['inspect', files.find((f) => f.endsWith('multi-engine.pte'))!, '--json']);
    const r = doc as { methods: Record<string, unknown>[] } & Record<string, unknown>;
    const m = r.methods[0] as { delegates: Record<string, unknown>[]; arenas: unknown[] } & Record<string, unknown>;
    const damaged = [
      { ...r, schema: 'trtx.check/1' },
      { ...r, file_size: -1 },
      { ...r, methods: [{ ...m, staging: undefined }] },
      { ...r, methods: [{ ...m, arenas: [{ index: 1, size: 64, device: 'gpu' }] }] },
      {
        ...r,
        methods: [
          { ...m, delegates: [{ ...m.delegates[0], tensorrt: { magic: 'TR03', engine_size: 1, inputs: [], outputs: [], aliased: [] } }] },
        ],
      },
      {
        ...r,
        methods: [
          { ...m, delegates: [{ ...m.delegates[0], compile_specs: [{ key: 'k', size: 1, raw: '"1"', decoded: { budget_bytes: 12 } }] }] },
        ],
      },
    ].map((d) => JSON.parse(JSON.stringify(d)));
    for (const d of damaged) expect(validate(INSPECT, d).length, JSON.stringify(d).slice(0, 80)).toBeGreaterThan(0);
  });
});
