// `-` names standard input or output by convention; no command of trtx
// reads or writes either, and `trtx rewrite f -o -` used to write a file
// named `./-` (issue 43). Every path a command takes refuses `-` the same
// way (src/cli/context.ts namedPath): a usage error, exit 2, before any work,
// and nothing written. `./-` still names a file called `-`.
import { describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from './helpers/cli.js';
import { corpusPath } from './helpers/corpus.js';
import { DOUBLE_PYTHON } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';

const INPUT = /^error: USAGE: - as an input: reading standard input is not supported; trtx reads named files only$/m;
const OUTPUT = /^error: USAGE: - as an output: writing to standard output is not supported; trtx writes named files only$/m;

/** A fresh folder holding one program, `model.pte`. */
function folder(): string {
  const dir = tempDir('dash-path');
  copyFileSync(corpusPath('add'), join(dir, 'model.pte'));
  return dir;
}

describe('`-` as a path is a usage error in every command', () => {
  it.each([
    ['rewrite -o -', ['rewrite', 'model.pte', '-o', '-'], OUTPUT],
    ['rewrite - -o out', ['rewrite', '-', '-o', 'out.pte'], INPUT],
    ['rewrite - --in-place', ['rewrite', '-', '--in-place'], INPUT],
    ['check -', ['check', '-'], INPUT],
    ['check a - b', ['check', 'model.pte', '-', 'model.pte'], INPUT],
    ['inspect -', ['inspect', '-'], INPUT],
    ['inspect --html -', ['inspect', 'model.pte', '--html', '-'], OUTPUT],
    ['diff - b', ['diff', '-', 'model.pte'], INPUT],
    ['diff a -', ['diff', 'model.pte', '-'], INPUT],
    ['diff --html -', ['diff', 'model.pte', 'model.pte', '--html', '-'], OUTPUT],
    ['export -', ['export', '-', '-o', 'out.pte', '--python', DOUBLE_PYTHON], INPUT],
    ['export -o -', ['export', 'model.pt2', '-o', '-', '--python', DOUBLE_PYTHON], OUTPUT],
    ['fixtures -', ['fixtures', '-'], OUTPUT],
    ['demo --out -', ['demo', '--out', '-'], OUTPUT],
    ['verify -', ['verify', '-'], INPUT],
    ['verify --reference -', ['verify', 'model.pte', '--reference', '-'], INPUT],
    ['verify --backend-lib -', ['verify', 'model.pte', '--backend-lib', '-'], INPUT],
  ])('%s', async (_, args, message) => {
    const dir = folder();
    // Were `-` taken as a path, demo and verify would go on to build the native runner: they find none instead.
    const r = await runCli(args, { cwd: dir, env: { TRTX_RUNNER_BIN: join(dir, 'no-runner') } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/^hint: name a file \(\.\/- for a file called -\)$/m);
    expect(readdirSync(dir)).toEqual(['model.pte']);
  });

  it('--json: the error document says the same', async () => {
    const dir = folder();
    const r = await runCli(['rewrite', 'model.pte', '-o', '-', '--json'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'USAGE', message: expect.stringMatching(/^- as an output: /) } });
    expect(existsSync(join(dir, '-'))).toBe(false);
  });

  it('./- is a file called -, read and written as any other', async () => {
    const dir = folder();
    const r = await runCli(['rewrite', 'model.pte', '-o', './-'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(dir, '-'))).toBe(true);
    expect((await runCli(['check', './-'], { cwd: dir })).code).toBe(0);
  });
});
