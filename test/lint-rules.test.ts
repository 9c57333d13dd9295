// ESLint's own rules of src/ (eslint.config.js), each shown firing. A run
// of the command line stays out of the process: below src/cli/ no code
// reads or changes `process` (its environment, folder, streams, exit
// status, signal handlers), so runs in one process go at once. Shown on the
// same text linted as three files: refused in the library, allowed in
// src/cli/ and in src/util/os-process.ts (the process's pid and signals to
// other processes, no run's state). And no function of src/ passes 80
// lines, the command line included: the rule has no allow-list.
import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';
import { REPO } from './helpers/bridge.js';

const READS_PROCESS = "import proc from 'node:process';\nexport const x = process.env.TRTX_PYTHON ?? process.cwd() ?? proc.pid;\n";

async function rulesFired(filePath: string): Promise<string[]> {
  const [result] = await new ESLint({ cwd: REPO }).lintText(READS_PROCESS, { filePath });
  return result.messages.map((m) => `${m.ruleId}:${m.line}:${m.column}`);
}

describe('no process below src/cli/', () => {
  it(
    'refuses the global and the node:process import in the library, allows them in src/cli/ and os-process.ts',
    { timeout: 120_000 },
    async () => {
      expect(await rulesFired('src/util/env.ts')).toEqual([
        'no-restricted-imports:1:1',
        'no-restricted-globals:2:18',
        'no-restricted-globals:2:45',
      ]);
      expect(await rulesFired('src/export/export.ts')).toContain('no-restricted-globals:2:18');
      expect(await rulesFired('src/cli/io.ts')).toEqual([]);
      expect(await rulesFired('src/util/os-process.ts')).toEqual([]);
    },
  );
});

const READS_PROCESS_FOLDERS = [
  "import { homedir, tmpdir } from 'node:os';",
  "import * as os from 'node:os';",
  "import path, { resolve } from 'node:path';",
  'export const a = [homedir(), tmpdir(), os.homedir(), os.tmpdir()];',
  "export const b = [resolve('x'), path.resolve('x'), path.resolve(), path.resolve('/run', 'x')];",
  '',
].join('\n');

describe("no process folder, home or temp folder below src/cli/: the run's (util/env.ts)", () => {
  const fired = async (filePath: string) =>
    (await new ESLint({ cwd: REPO }).lintText(READS_PROCESS_FOLDERS, { filePath }))[0].messages
      .map((m) => `${m.ruleId}:${m.line}:${m.column}`)
      .filter((m) => !m.startsWith('@typescript-eslint/'));

  it(
    'refuses os.homedir, os.tmpdir, resolve from node:path and path.resolve of fewer than two paths; util/env.ts alone imports resolve; src/cli/ is the top',
    { timeout: 120_000 },
    async () => {
      // homedir, tmpdir, os.* imported whole; resolve; os.homedir(), os.tmpdir(); path.resolve('x'), path.resolve() (two paths pass).
      const library = [
        'imports:1:10',
        'imports:1:19',
        'imports:2:8',
        'imports:3:16',
        'syntax:4:40',
        'syntax:4:54',
        'syntax:5:33',
        'syntax:5:52',
      ];
      expect(await fired('src/export/export.ts')).toEqual(library.map((m) => `no-restricted-${m}`));
      expect(await fired('src/util/env.ts')).toEqual(library.filter((m) => m !== 'imports:3:16').map((m) => `no-restricted-${m}`));
      expect(await fired('src/cli/io.ts')).toEqual([]);
    },
  );
});

describe('functions of src/ hold at most 80 lines (blank and comment lines not counted), with no allow-list', () => {
  /** A function of `n` lines from its signature to its closing brace, plus blank and comment lines that do not count. */
  const functionOf = (n: number) =>
    `export function f(): number {\n  let x = 0;\n${'  x += 1;\n\n  // a comment\n'.repeat(n - 4)}  return x;\n}\n`;

  it('refuses 81 lines anywhere under src/, allows 80', { timeout: 120_000 }, async () => {
    const lint = async (text: string, filePath: string) =>
      (await new ESLint({ cwd: REPO }).lintText(text, { filePath }))[0].messages.map((m) => m.ruleId);
    expect(await lint(functionOf(80), 'src/util/env.ts')).toEqual([]);
    expect(await lint(functionOf(81), 'src/util/env.ts')).toEqual(['max-lines-per-function']);
    expect(await lint(functionOf(81), 'src/cli/io.ts')).toEqual(['max-lines-per-function']);
  });
});
