// One exit-code table for every command (src/codes/exit.ts): every code
// carries its status from its family, a refusal ends a command with its
// code's status wherever it is raised, and --help, the README and
// docs/exit-codes.md say the same table.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import {
  BRIDGE_ERROR_TYPES,
  CODES,
  EXIT_SUMMARY,
  EXIT_TABLE,
  FAMILIES,
  RUNNER_REPORT_CODES,
  exitStatusOf,
  runnerReportExit,
  type Code,
  type RunnerReportCode,
} from '../src/codes/index.js';
import { TrtxError } from '../src/util/errors.js';
import { EXIT_CODES_HELP } from '../src/cli/main.js';
import { ENVIRONMENT } from '../src/verify/environment.js';
import { EXIT_CODES_DOC, renderExitCodesDoc } from '../scripts/gen-codes.js';
import { REPO } from './helpers/bridge.js';
import { execFileSync } from 'node:child_process';

const flat = (s: string) => s.replace(/\s+/g, ' ');

describe('the exit-code table', () => {
  it('gives every code of every family one status, 1 or 2, and names only its own codes as exceptions', () => {
    for (const f of FAMILIES) {
      for (const code of Object.keys(f.exitExceptions ?? {})) expect(Object.keys(f.codes), `${f.title}: ${code}`).toContain(code);
      if (f.space !== 'error') continue;
      expect(f.exit, f.title).not.toBeNull();
      for (const code of Object.keys(f.codes)) expect([1, 2], code).toContain(exitStatusOf(code as Code));
    }
  });

  it('ends a command with the status of the code, whoever raises it', () => {
    for (const code of Object.keys(CODES) as Code[]) {
      const e = new TrtxError(code, '', 'x');
      expect(e.kind, code).toBe(exitStatusOf(code) === 2 ? 'usage' : 'check');
    }
  });

  it('is never chosen where an error is raised: no TrtxError in src/ passes a kind, but diff (its 1 means "the programs differ")', () => {
    const files = execFileSync('git', ['ls-files', 'src'], { cwd: REPO, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f.endsWith('.ts'));
    const chosen: string[] = [];
    for (const f of files) {
      const src = ts.createSourceFile(f, readFileSync(join(REPO, f), 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (n: ts.Node): void => {
        if (ts.isNewExpression(n) && /^(TrtxError|BridgeFailure)$/.test(n.expression.getText())) {
          const o = n.arguments?.[3];
          if (o && ts.isObjectLiteralExpression(o) && o.properties.some((p) => p.name?.getText() === 'kind'))
            chosen.push(`${f}:${src.getLineAndCharacterOfPosition(n.getStart()).line + 1}`);
        }
        ts.forEachChild(n, visit);
      };
      visit(src);
    }
    expect(chosen.every((c) => c.startsWith('src/cli/commands/diff.ts:'))).toBe(true);
  });

  it('classifies every bridge error: a refused model is 1, a missing environment or a wrong request is 2', () => {
    const status = (t: string) => exitStatusOf(`BRIDGE_${t}` as Code);
    for (const t of ['MODEL_LOAD', 'PICKLE_REFUSED', 'TORCHSCRIPT', 'FACTORY', 'TRACE', 'COMPILE', 'LOWER', 'FINALIZE'])
      expect(status(t), t).toBe(1);
    for (const t of [
      'MODEL_FORMAT',
      'IMPORT_MISSING',
      'IMPORT_FAILED',
      'TORCH_TENSORRT_TOO_OLD',
      'PYTHON_VERSION',
      'MODEL_NOT_FOUND',
      'REQUEST',
      'WRITE',
    ])
      expect(status(t), t).toBe(2);
    // The trtx-side model gate agrees with the bridge's.
    expect(exitStatusOf('EXPORT_MODEL_FORMAT')).toBe(status('MODEL_FORMAT'));
    expect(Object.keys(BRIDGE_ERROR_TYPES).every((t) => [1, 2].includes(status(t)))).toBe(true);
  });

  it('reads the runner results verify turns into environment codes as 2, every other runner error as a failed program', () => {
    const env = Object.keys(RUNNER_REPORT_CODES).filter((c) => runnerReportExit(c as RunnerReportCode) === 2);
    expect(env.sort()).toEqual(Object.keys(ENVIRONMENT).sort());
    for (const { code } of Object.values(ENVIRONMENT)) expect(exitStatusOf(code), code).toBe(2);
    expect(exitStatusOf('VERIFY_KERNEL_MISSING')).toBe(exitStatusOf('VERIFY_BACKEND_MISSING'));
  });

  it('is the table --help prints, the README states and docs/exit-codes.md holds', () => {
    for (const r of EXIT_TABLE) expect(EXIT_CODES_HELP).toContain(`  ${r.status}  ${r.meaning}`);
    expect(flat(readFileSync(join(REPO, 'README.md'), 'utf8'))).toContain(`Every command: ${EXIT_SUMMARY}`);
    expect(readFileSync(EXIT_CODES_DOC, 'utf8')).toBe(renderExitCodesDoc());
  });
});
