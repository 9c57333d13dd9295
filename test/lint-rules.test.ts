// The ESLint rule that keeps a run of the command line out of the process
// (eslint.config.js): below src/cli/ no code reads or changes `process`
// (its environment, folder, streams, exit status, signal handlers), so runs
// in one process go at once. Shown on the same text linted as three files:
// refused in the library, allowed in src/cli/ and in src/util/os-process.ts
// (the process's pid and signals to other processes, no run's state).
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
