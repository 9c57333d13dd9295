// The import rules of docs/architecture.md, as dependency-cruiser checks them
// (.dependency-cruiser.cjs, `npm run deps` in CI): src/ keeps them, and each
// rule refuses the arrow it names, shown on a small tree that breaks them all.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPO } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

function cruise(cwd: string): Violation[] {
  const bin = join(REPO, 'node_modules', '.bin', 'depcruise');
  const r = spawnSync(bin, ['src', '--config', join(REPO, '.dependency-cruiser.cjs'), '--output-type', 'json'], { cwd, encoding: 'utf8' });
  if (r.stdout.trim() === '') throw new Error(`depcruise printed nothing (exit ${r.status}): ${r.stderr}`);
  return (JSON.parse(r.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

describe('import rules', () => {
  it('src/ keeps them: no cycle, no arrow into tests or fixtures, the layers as documented', { timeout: 60_000 }, () => {
    expect(cruise(REPO).map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([]);
  });

  it('each rule refuses the arrow it names', { timeout: 60_000 }, () => {
    const dir = tempDir('import-rules');
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({
        compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler', allowImportingTsExtensions: true, noEmit: true },
      }),
      'fixtures/program.ts': 'export const p = 1;\n',
      'src/pte/model.ts': 'export const m = 1;\n',
      'src/util/size.ts': "import { m } from '../pte/model.js';\nexport const s = m;\n",
      'src/checks/zero-copy.ts': "import { pass } from '../passes/zero-copy.js';\nexport const check = pass;\n",
      'src/passes/zero-copy.ts':
        "import type { check } from '../checks/zero-copy.js';\nexport const pass = 1;\nexport type C = typeof check;\n",
      'src/demo/demo.ts':
        "import { p } from '../../fixtures/program.js';\nimport { pass } from '../passes/zero-copy.js';\nexport const d = p + pass;\n",
      'src/verify/verify.ts': "import { usage } from '../cli/context.js';\nexport const v = usage;\n",
      'src/cli/context.ts': 'export const usage = 1;\n',
      'src/cli/main.ts': "import { run } from './commands/rewrite.js';\nexport const action = run;\n",
      'src/cli/commands/rewrite.ts':
        "import { action } from '../main.js';\nimport { c } from './check.js';\nexport const run = () => action ?? c;\n",
      'src/cli/commands/check.ts': 'export const c = 1;\n',
    };
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    const broken = new Map<string, string[]>();
    for (const v of cruise(dir)) broken.set(v.rule.name, [...(broken.get(v.rule.name) ?? []), `${v.from} -> ${v.to}`]);
    expect(broken.get('no-cycles')).toEqual(
      expect.arrayContaining(['src/checks/zero-copy.ts -> src/passes/zero-copy.ts', 'src/cli/commands/rewrite.ts -> src/cli/main.ts']),
    );
    expect(broken.get('src-not-tests')).toEqual(['src/demo/demo.ts -> fixtures/program.ts']);
    expect(broken.get('checks-not-passes')).toEqual(['src/checks/zero-copy.ts -> src/passes/zero-copy.ts']);
    // A type-only import is an arrow too.
    expect(broken.get('passes-not-checks')).toEqual(['src/passes/zero-copy.ts -> src/checks/zero-copy.ts']);
    expect(broken.get('passes-only-in-the-pipeline')).toEqual(expect.arrayContaining(['src/demo/demo.ts -> src/passes/zero-copy.ts']));
    expect(broken.get('library-not-cli')).toEqual(['src/verify/verify.ts -> src/cli/context.ts']);
    expect(broken.get('commands-independent')).toEqual(
      expect.arrayContaining([
        'src/cli/commands/rewrite.ts -> src/cli/main.ts',
        'src/cli/commands/rewrite.ts -> src/cli/commands/check.ts',
      ]),
    );
    expect(broken.get('layer-util')).toEqual(['src/util/size.ts -> src/pte/model.ts']);
  });
});
