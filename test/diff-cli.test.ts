// `trtx diff` on the command line: human output grouped by method with
// -/+/~ lines, --json valid against schemas/diff.schema.json, exit 0 whether
// or not the programs differ, 1 with --exit-code when they do, and one line
// with exit 2 for a missing file, a directory or a file that is not a .pte.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeFixture } from '../src/examples/builder.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { runCli } from './helpers/cli.js';
import { validate } from './helpers/json-schema.js';
import { tempDir } from './helpers/temp.js';

const REPO = resolve(fileURLToPath(new URL('..', import.meta.url)));
const schema = JSON.parse(readFileSync(join(REPO, 'schemas', 'diff.schema.json'), 'utf8')) as Record<string, unknown>;
const dir = tempDir('diff-cli');

const staged = join(dir, 'kv-decode-staged.pte');
const zeroCopy = join(dir, 'kv-decode-zero-copy.pte');
const notPte = join(dir, 'notes.txt');

beforeAll(async () => {
  await writeFixture(staged, catalogueEntry('kv-decode-staged.pte').build());
  await writeFixture(zeroCopy, catalogueEntry('kv-decode-zero-copy.pte').build());
  writeFileSync(notPte, 'these are notes, not a program\n');
});

// The cases go at once (runCli's runs share nothing): each reads the shared inputs or writes files of its own names.
describe.concurrent('trtx diff --json', () => {
  it('validates against the schema, for a difference and for none', async () => {
    for (const [a, b] of [
      [staged, zeroCopy],
      [staged, staged],
    ]) {
      const r = await runCli(['diff', a, b, '--json']);
      expect(r.code).toBe(0);
      const doc = JSON.parse(r.stdout);
      expect(validate(schema, doc)).toEqual([]);
      expect(doc.equivalent).toBe(a === b);
    }
  });

  it('is held to the schema: a report missing a section does not validate', async () => {
    const doc = JSON.parse((await runCli(['diff', staged, zeroCopy, '--json'])).stdout);
    // Every section the staged -> zero-copy rewrite fills is in the output.
    const decode = doc.methods.find((m: { name: string }) => m.name === 'decode');
    for (const key of ['instructions', 'delegates', 'arenas', 'tensors']) expect(decode[key].length).toBeGreaterThan(0);
    expect(decode.staging).not.toBeNull();
    delete decode.tensors;
    expect(validate(schema, doc)).not.toEqual([]);
    expect(validate(schema, doc, { $ref: '#/$defs/report' })).toContain("/methods/0: must have required property 'tensors'");
  });

  it('prints the error object for an unreadable input, valid against the schema', async () => {
    const r = await runCli(['diff', join(dir, 'missing.pte'), staged, '--json']);
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.stdout);
    expect(doc.error.code).toBe('INPUT_UNREADABLE');
    expect(validate(schema, doc)).toEqual([]);
  });
});

describe.concurrent('trtx diff (human)', () => {
  it('groups -/+/~ lines by method and ends with the count', async () => {
    const r = await runCli(['diff', staged, zeroCopy]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 2)).toEqual([`--- ${staged}`, `+++ ${zeroCopy}`]);
    expect(lines).toContain('method decode');
    expect(lines).toContain('method prefill');
    expect(lines).toContain('  - [0] et_copy::_h2d_copy.out(layers.0.attn.k_cache, delegate0.b_layers_0_attn_k_cache)');
    expect(lines).toContain('    - arg output0: float[1,2,8,4]@a2(cuda:0)');
    expect(lines).toContain('    + spec zero_copy_kv = output0, output1, output2, output3');
    expect(lines).toContain('  ~ tensor layers.0.attn.k_cache moved: float[1,2,8,4] a1+0 (cpu) -> float[1,2,8,4] a2+0 (cuda:0)');
    expect(lines.some((l) => l.startsWith('  ~ staging per execution: host->device 1.04 KiB -> 40 B'))).toBe(true);
    expect(lines.at(-1)).toMatch(/^\d+ change\(s\)$/);
    // No colour off a terminal.
    expect(r.stdout).not.toContain('\u001b[');
  });

  it('says so when nothing differs', async () => {
    const r = await runCli(['diff', zeroCopy, zeroCopy]);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('no differences in meaning');
  });
});

describe.concurrent('trtx diff exit codes', () => {
  it('exits 0 with differences, 1 with --exit-code, 0 with --exit-code and none', async () => {
    expect((await runCli(['diff', staged, zeroCopy])).code).toBe(0);
    expect((await runCli(['diff', staged, zeroCopy, '--exit-code'])).code).toBe(1);
    expect((await runCli(['diff', staged, staged, '--exit-code'])).code).toBe(0);
  });

  it('exits 2, never the "differ" code 1, when an input is malformed (with or without --exit-code)', async () => {
    const truncated = join(dir, 'truncated.pte');
    writeFileSync(truncated, readFileSync(staged).subarray(0, 100));
    for (const extra of [[], ['--exit-code']]) {
      const r = await runCli(['diff', staged, truncated, ...extra]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^error: PTE_[A-Z_]+: .*truncated\.pte/);
    }
  });

  it.each([
    ['a missing file', join(dir, 'missing.pte'), 'no such file'],
    ['a directory', dir, 'is a directory'],
    ['a file that is not a .pte', notPte, 'not an ExecuTorch program'],
  ])('prints one line and exits 2 for %s, on either side', async (_what, bad, message) => {
    for (const args of [
      [bad, staged],
      [staged, bad],
    ]) {
      const r = await runCli(['diff', ...args]);
      expect(r.code).toBe(2);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(message);
      // With two inputs, the line says which one.
      expect(lines[0]).toContain(bad);
      expect(r.stdout).toBe('');
    }
  });

  it('is wired into bin/trtx', async () => {
    const run = await promisify(execFile)(join(REPO, 'bin', 'trtx'), ['diff', staged, zeroCopy, '--method', 'decode', '--exit-code']).then(
      () => ({ code: 0, stdout: '' }),
      (e: { code: number; stdout: string }) => e,
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('method decode');
    expect(run.stdout).not.toContain('method prefill');
  });
});
