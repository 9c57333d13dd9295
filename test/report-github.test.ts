// `trtx check --format github`: each line is exactly what GitHub's own
// toolkit (@actions/core, the reference implementation of workflow
// commands) writes for the same annotation, including the escaping of
// hostile names from the file.
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { EOL } from 'node:os';
import * as core from '@actions/core';
import { writeFixture } from '../src/examples/builder.js';
import { CATALOGUE } from '../src/examples/catalogue.js';
import { multiEngine, trtSingle } from '../src/examples/programs.js';
import type { Diagnostic } from '../src/checks/diagnostic.js';
import { annotation } from '../src/report/github.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('github');

/** What @actions/core writes to stdout for this annotation. */
function reference(file: string, d: Diagnostic): string {
  let out = '';
  // eslint-disable-next-line @typescript-eslint/unbound-method -- saved to be put back as is, never called detached
  const write = process.stdout.write;
  process.stdout.write = (chunk: string) => {
    out += chunk;
    return true;
  };
  try {
    const fn = d.severity === 'error' ? core.error : d.severity === 'warning' ? core.warning : core.notice;
    fn(`${d.message}\nhint: ${d.hint}`, { title: `${d.code} at ${d.location || 'program'}`, file });
  } finally {
    process.stdout.write = write;
  }
  expect(out.endsWith(EOL)).toBe(true);
  return out.slice(0, -EOL.length);
}

const broken = CATALOGUE.filter((e) => e.expect?.sound === false);

beforeAll(async () => {
  for (const e of broken) await writeFixture(join(dir, e.file), e.build());
  await writeFixture(join(dir, 'clean.pte'), trtSingle());
  await writeFixture(join(dir, 'warned.pte'), multiEngine(3));
}, 120_000);

// The cases go at once (runCli's runs share nothing): each reads the shared inputs or writes files of its own names.
describe.concurrent('check --format github', () => {
  it('escapes like @actions/core: newlines, percent, colons and commas in names cannot start a command', () => {
    const hostile: Diagnostic = {
      severity: 'error',
      code: 'TRT_BINDING_NAME_NUL',
      method: 'de:code,1',
      delegate: 0,
      location: 'de:code,1 > delegate 0 (TensorRTBackend) > binding "x\r\n::set-env name=A::B"',
      message: 'binding "x\r\n::warning::fake 100%" contains\u0000 a NUL',
      hint: 'rename it, 50% of the time: never',
    };
    for (const severity of ['error', 'warning', 'info'] as const) {
      const d = { ...hostile, severity };
      const line = annotation('dir,with:odd%chars/a b.pte', d);
      expect(line).toBe(reference('dir,with:odd%chars/a b.pte', d));
      expect(line.split('\n')).toHaveLength(1);
      expect(line).not.toContain('\r');
    }
    expect(annotation('a.pte', { ...hostile, severity: 'info' })).toMatch(/^::notice /);
  });

  it.each(broken.map((e) => e.file))('%s: one annotation per diagnostic, equal to @actions/core', async (name) => {
    const file = join(dir, name);
    const r = await runCli(['check', file, '--format', 'github']);
    const check = JSON.parse((await runCli(['check', file, '--json'])).stdout);
    const lines = r.stdout.trimEnd().split('\n');
    expect(r.code).toBe(1);
    expect(lines).toHaveLength(check.diagnostics.length + 1);
    check.diagnostics.forEach((d: Diagnostic, i: number) => expect(lines[i]).toBe(reference(file, d)));
    expect(lines.at(-1)).toBe(`trtx check ${file}: ${check.summary.line}`);
  });

  it('a clean program prints only its summary; a warning is a ::warning and exits 0', async () => {
    const clean = await runCli(['check', join(dir, 'clean.pte'), '--format', 'github']);
    expect(clean.code).toBe(0);
    expect(clean.stdout.trimEnd().split('\n')).toEqual([`trtx check ${join(dir, 'clean.pte')}: 0 errors, 0 warnings`]);
    const warned = await runCli(['check', join(dir, 'warned.pte'), '--format', 'github']);
    expect(warned.code).toBe(0);
    expect(warned.stdout).toMatch(/^::warning title=TRT_BUDGET_MULTI_ENGINE at program,file=/);
  });
});
