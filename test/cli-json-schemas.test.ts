// Every command's `--json` document against its schema under schemas/: a real
// run of inspect, check, rewrite (--budget and --zero-copy-kv), verify, diff,
// demo and export validates, a damaged copy of each does not (the schemas are
// not vacuous), and a failing --json run prints the error document of
// schemas/error.schema.json. The validator is Ajv in strict mode
// (test/helpers/json-schema.ts): a keyword it does not know is an error,
// so a schema cannot lean on an unchecked one. verify and demo run the prebuilt test runner; export
// runs the explicitly named double interpreter (no torch here).
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { catalogueEntry, kvDecoder, multiEngine } from '../src/examples/catalogue.js';
import { DOUBLE_PYTHON, REPO, workspace } from './helpers/bridge.js';
import { runCli } from './helpers/cli.js';
import { validate } from './helpers/json-schema.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';

// Documents are walked and damaged by key path; the schemas, not the types, hold their shape.
type Doc = Record<string, any>;
type Schema = Record<string, unknown>;

const schema = (name: string) => JSON.parse(readFileSync(join(REPO, 'schemas', `${name}.schema.json`), 'utf8')) as Schema;
const SCHEMAS = Object.fromEntries(
  ['inspect', 'check', 'rewrite', 'verify', 'diff', 'demo', 'export', 'fixtures', 'env', 'error'].map((n) => [n, schema(n)]),
);

const dir = tempDir('json-schemas');
const staged = join(dir, 'kv-decode-staged.pte');
const zeroCopy = join(dir, 'kv-decode-zero-copy.pte');
const engines = join(dir, 'multi-engine.pte');

async function json(args: string[], expectCode = 0, env?: Record<string, string>): Promise<Doc> {
  const r = await runCli(args, { env });
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(expectCode);
  return JSON.parse(r.stdout) as Doc;
}

const copy = (d: unknown): Doc => JSON.parse(JSON.stringify(d)) as Doc;

/** Each damage is applied to a fresh copy of `doc`; every result must fail `s`. */
function expectRefused(s: Schema, doc: Doc, damages: Record<string, (d: Doc) => void>): void {
  for (const [what, damage] of Object.entries(damages)) {
    const d = copy(doc);
    damage(d);
    expect(validate(s, d).length, what).toBeGreaterThan(0);
  }
}

// The real documents, produced once.
const docs: Record<string, Doc> = {};
let runner = '';

beforeAll(async () => {
  await writeFixture(staged, kvDecoder());
  await writeFixture(zeroCopy, catalogueEntry('kv-decode-zero-copy.pte').build());
  await writeFixture(engines, multiEngine());
  runner = await testRunner();

  // Every run writes a file of its own: they go at once (test/helpers/cli.ts).
  const withRunner = { TRTX_RUNNER_BIN: runner };
  [docs.inspect, docs.check, docs.rewriteBudget, docs.rewriteZeroCopy, docs.diff, docs.fixtures, docs.env, docs.verify, docs.demo] =
    await Promise.all([
      json(['inspect', staged, '--json']),
      json(['check', staged, '--json']),
      json(['rewrite', engines, '-o', join(dir, 'budget.pte'), '--budget', '8GiB', '--json']),
      json(['rewrite', staged, '-o', join(dir, 'rewritten-zero-copy.pte'), '--zero-copy-kv', '--json']),
      json(['diff', staged, zeroCopy, '--json']),
      json(['fixtures', join(dir, 'fixtures'), '--json']),
      json(['env', '--json']),
      json(['verify', staged, '--zero-copy-kv', '--init-device-buffers', '--json'], 0, withRunner),
      json(['demo', '--out', join(dir, 'demo'), '--json'], 0, withRunner),
    ]);

  const ws = workspace();
  const program = join(ws.dir, 'exported-by-double.pte');
  await writeFixture(program, kvDecoder());
  docs.export = await json(
    [
      'export',
      ws.file('model.pt2'),
      '-o',
      join(ws.dir, 'model.pte'),
      '--budget',
      '8GiB',
      '--zero-copy-kv',
      '--python',
      DOUBLE_PYTHON,
      '--json',
    ],
    0,
    { TRTX_DOUBLE_CALLS: ws.calls, TRTX_DOUBLE_PROGRAM: program },
  );
}, BUILD_TIMEOUT_MS);

describe('--json documents validate against their schemas', () => {
  it.each([
    ['inspect', 'inspect'],
    ['check', 'check'],
    ['rewriteBudget', 'rewrite'],
    ['rewriteZeroCopy', 'rewrite'],
    ['verify', 'verify'],
    ['diff', 'diff'],
    ['demo', 'demo'],
    ['export', 'export'],
    ['fixtures', 'fixtures'],
    ['env', 'env'],
  ])('%s against %s.schema.json', (doc, name) => {
    expect(validate(SCHEMAS[name], docs[doc])).toEqual([]);
  });

  it('exercises the parts the schemas describe (not only empty lists)', () => {
    expect(docs.rewriteBudget.passes.map((p: Doc) => p.pass)).toEqual(['budget']);
    expect(docs.rewriteBudget.passes[0].details.resident).not.toBeNull();
    expect(docs.rewriteBudget.warnings.length).toBeGreaterThan(0);
    expect(docs.rewriteZeroCopy.passes.map((p: Doc) => p.pass)).toEqual(['zero-copy-kv']);
    expect(docs.rewriteZeroCopy.passes[0].details.rewritten.length).toBeGreaterThan(0);
    expect(docs.verify.mode).toBe('staged-vs-zero-copy');
    expect(docs.verify.ok).toBe(true);
    expect(docs.verify.runs.map((r: Doc) => r.caller_stream)).toContain(true);
    expect(docs.demo.verify.assertions.length).toBeGreaterThan(0);
    expect(docs.export.passes.map((p: Doc) => p.pass)).toEqual(['budget', 'zero-copy-kv']);
    expect(docs.export.diagnostics.length).toBeGreaterThan(0);
    expect(docs.demo.check.diagnostics.length).toBeGreaterThan(0);
    expect(docs.fixtures.files.map((f: Doc) => f.sound)).toContain(false);
  });

  it('demo.schema.json refers to the verify result of verify.schema.json instead of repeating it', () => {
    const demoResult = (SCHEMAS.demo.$defs as Record<string, Doc>).result;
    expect(demoResult.properties.verify.$ref).toBe('https://trtx.dev/schemas/verify.schema.json#/$defs/result');
    expect(SCHEMAS.demo.$defs).not.toHaveProperty('run');
  });
});

describe('the schemas refuse damaged documents', () => {
  it('env', () => {
    expect(docs.env.source).toBe('managed');
    expectRefused(SCHEMAS.env, docs.env, {
      schema: (d) => (d.schema = 'trtx.env/2'),
      source: (d) => (d.source = 'default'),
      hash: (d) => (d.lock_hash = 'xyz'),
      version: (d) => (d.versions.python = '3'),
      extra: (d) => (d.extra = 1),
    });
  });
  it('inspect and check', () => {
    expectRefused(SCHEMAS.inspect, docs.inspect, {
      schema: (d) => (d.schema = 'trtx.inspect/2'),
      size: (d) => (d.file_size = -1),
      extra: (d) => (d.extra = 1),
    });
    expectRefused(SCHEMAS.check, docs.check, {
      ok: (d) => (d.ok = 'yes'),
      summary: (d) => delete d.summary.line,
      extra: (d) => (d.extra = 1),
    });
  });

  it('rewrite', () => {
    expectRefused(SCHEMAS.rewrite, docs.rewriteBudget, {
      schema: (d) => (d.schema = 'trtx.rewrite/2'),
      mode: (d) => (d.mode = 'partial'),
      'unknown pass': (d) => (d.passes[0].pass = 'budgets'),
      'budget as a number': (d) => (d.passes[0].details.edits[0].after = { kind: 'bytes', bytes: 8589934592 }),
      'budget state kind': (d) => (d.passes[0].details.edits[0].before = { kind: 'unset' }),
      'resident of one engine': (d) => (d.passes[0].details.resident.engines = 1),
      'file size': (d) => (d.file_size = -1),
      'missing fallback': (d) => delete d.fallback,
      extra: (d) => (d.extra = 1),
    });
    expectRefused(SCHEMAS.rewrite, docs.rewriteZeroCopy, {
      'arena device': (d) => (d.passes[0].details.methods[0].arenas[0].device = 'gpu'),
      'cache bytes as a number': (d) => (d.passes[0].details.methods[0].caches[0].bytes = 256),
      'staging lacks copies': (d) => delete d.passes[0].details.methods[0].staging_after.copies,
      'delegate lacks elided': (d) => delete d.passes[0].details.rewritten[0].elided,
    });
  });

  it('verify', () => {
    expectRefused(SCHEMAS.verify, docs.verify, {
      schema: (d) => (d.schema = 'trtx.verify/1'),
      device: (d) => (d.device.kind = 'gpu'),
      'one step': (d) => (d.steps = 1),
      mode: (d) => (d.mode = 'zero-copy-vs-staged'),
      'check without refused': (d) => delete d.check.refused,
      'unknown runtime': (d) => (d.runtime.memory = 'malloc'),
      'arena fill not poison': (d) => (d.options.arena_fill = 'zero'),
      'memory pool mode': (d) => (d.memory.pool.mode = 'tepid'),
      'run without init_device_buffers': (d) => delete d.runs[0].init_device_buffers,
      'run variant': (d) => (d.runs[0].variant = 'twin'),
      'runner error code': (d) => (d.runs[0].errors = [{ code: '1bad', location: '', message: '' }]),
      'effective budget as a number': (d) => (d.budgets[0].effective = 2097152),
      'budget source': (d) => (d.budgets[0].source = 'env'),
      'assertion lacks detail': (d) => delete d.assertions[0].detail,
      extra: (d) => (d.extra = 1),
    });
  });

  it('diff', () => {
    expectRefused(SCHEMAS.diff, docs.diff, { schema: (d) => (d.schema = 'trtx.diff/2'), extra: (d) => (d.extra = 1) });
  });

  it('demo, including the verify result it embeds', () => {
    expectRefused(SCHEMAS.demo, docs.demo, {
      schema: (d) => (d.schema = 'trtx.demo/2'),
      scale: (d) => (d.scale = 'large'),
      'staging lacks d2h': (d) => delete d.staging.before.d2h,
      'budget as a number': (d) => (d.budgets[0].bytes = 8589934592),
      'check line': (d) => (d.check.line = 'clean'),
      'check diagnostic without its message': (d) => delete d.check.diagnostics[0].message,
      'verify ok': (d) => (d.verify.ok = 'yes'),
      'verify device': (d) => (d.verify.device.index = -1),
      'verify extra': (d) => (d.verify.extra = 1),
      extra: (d) => (d.extra = 1),
    });
  });

  it('export', () => {
    expectRefused(SCHEMAS.export, docs.export, {
      schema: (d) => (d.schema = 'trtx.export/2'),
      'python source': (d) => (d.python.source = 'env'),
      'versions lack torch': (d) => delete d.versions.torch,
      'no methods': (d) => (d.methods = []),
      'method name': (d) => (d.methods[0].name = 'not a name'),
      'buffer map value': (d) => (d.methods[0].signature.buffers_to_mutate = { x: 1 }),
      'budget as a number': (d) => (d.bridge.weight_streaming.budget_bytes = 8589934592),
      'unknown pass': (d) => (d.passes[0].pass = 'quantize'),
      'diagnostic severity': (d) => (d.diagnostics[0].severity = 'fatal'),
      extra: (d) => (d.extra = 1),
    });
  });

  it('fixtures', () => {
    expectRefused(SCHEMAS.fixtures, docs.fixtures, {
      schema: (d) => (d.schema = 'trtx.fixtures/2'),
      'no files': (d) => (d.files = []),
      'a path, not a name': (d) => (d.files[0].file = 'dir/kv.pte'),
      'size as text': (d) => (d.files[0].bytes = '14 KiB'),
      extra: (d) => (d.files[0].extra = 1),
    });
  });

  it('error', () => {
    const doc = { error: { code: 'INPUT_UNREADABLE', location: '/x.pte', message: 'no such file', hint: null } };
    expect(validate(SCHEMAS.error, doc)).toEqual([]);
    expectRefused(SCHEMAS.error, doc, {
      'lower-case code': (d) => (d.error.code = 'input_unreadable'),
      'no hint': (d) => delete d.error.hint,
      'empty message': (d) => (d.error.message = ''),
      extra: (d) => (d.error.stack = 'at ...'),
      'not wrapped': (d) => (d.code = 'X'),
    });
  });
});

describe('a failing --json run prints the error document', () => {
  const missing = join(dir, 'missing.pte');
  it.each([
    ['inspect', () => ['inspect', missing, '--json']],
    ['check', () => ['check', missing, '--json']],
    ['rewrite', () => ['rewrite', missing, '-o', join(dir, 'never.pte'), '--json']],
    ['rewrite', () => ['rewrite', staged, '--json']],
    ['verify', () => ['verify', missing, '--json']],
    ['diff', () => ['diff', staged, missing, '--json']],
    // --out names a file: the demo cannot make its folder.
    ['demo', () => ['demo', '--out', staged, '--json']],
    // DIR names a file.
    ['fixtures', () => ['fixtures', staged, '--json']],
  ])('%s', async (name, args) => {
    const doc = await json(args(), 2, { TRTX_RUNNER_BIN: runner });
    expect(validate(SCHEMAS.error, doc)).toEqual([]);
    expect(validate(SCHEMAS[name], doc)).toEqual([]);
  });

  it('with the findings behind a refusal by a check (REWRITE_CHECK_FAILED), none of them on stderr', async () => {
    const broken = join(dir, 'broken-arity.pte');
    await writeFixture(broken, catalogueEntry('broken-arity.pte').build());
    const r = await runCli(['rewrite', broken, '-o', join(dir, 'never.pte'), '--budget', '1GiB', '--json']);
    expect(r.code, r.stderr).toBe(1);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.error.code).toBe('REWRITE_CHECK_FAILED');
    expect(doc.error.diagnostics.filter((d: Doc) => d.severity === 'error').map((d: Doc) => d.code)).toEqual(['TRT_ARITY']);
    // reportError writes the one error document every command's schema holds.
    for (const name of ['error', 'rewrite', 'export', 'verify', 'demo']) expect(validate(SCHEMAS[name], doc), name).toEqual([]);
    for (const name of ['error', 'rewrite', 'export', 'verify', 'demo']) {
      expectRefused(SCHEMAS[name], doc, {
        'a finding without its code': (d) => delete d.error.diagnostics[0].code,
        'a finding with an extra key': (d) => (d.error.diagnostics[0].extra = 1),
        'findings not a list': (d) => (d.error.diagnostics = { 0: d.error.diagnostics[0] }),
      });
    }
    expect(r.stderr).not.toContain('TRT_ARITY');
    expect(r.stderr).toMatch(/^error: REWRITE_CHECK_FAILED: /);
  });

  it('export', async () => {
    const doc = await json(['export', join(dir, 'missing.pt2'), '-o', join(dir, 'never.pte'), '--python', DOUBLE_PYTHON, '--json'], 2);
    // Refused by trtx before Python starts (src/export/model-file.ts).
    expect(doc.error.code).toBe('INPUT_UNREADABLE');
    expect(validate(SCHEMAS.error, doc)).toEqual([]);
    expect(validate(SCHEMAS.export, doc)).toEqual([]);
  });
});
