// The 400-line rule of docs/architecture.md (scripts/line-limit.mjs, run by
// `npm run lines:check` in .ci/run): which files it holds, how it counts, and
// that it names an offender and fails, so a file that grows past the limit
// cannot land unnoticed.
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error the script is plain JavaScript without declarations
import { countLines, isHandWrittenSource, MAX_LINES, oversizedSources } from '../scripts/line-limit.mjs';
import { tempDir } from './helpers/temp.js';

const script = fileURLToPath(new URL('../scripts/line-limit.mjs', import.meta.url));
const lines = (n: number) => 'x\n'.repeat(n);

/** A git work tree holding `files` (tracked and untracked alike count). */
function repo(files: Record<string, string>): string {
  const root = tempDir('lines');
  execFileSync('git', ['init', '-q', root]);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('the 400-line rule', () => {
  it('counts lines as an editor shows them', () => {
    expect(countLines('')).toBe(0);
    expect(countLines('a')).toBe(1);
    expect(countLines('a\n')).toBe(1);
    expect(countLines('a\nb')).toBe(2);
  });

  it('holds hand-written sources of every language and scripts without an extension, not generated code or data', () => {
    expect(isHandWrittenSource('src/passes/zero-copy.ts', '')).toBe(true);
    expect(isHandWrittenSource('native-runner/src/cli/main.cpp', '')).toBe(true);
    expect(isHandWrittenSource('python-bridge/trtx_bridge/export.py', '')).toBe(true);
    expect(isHandWrittenSource('bin/trtx', '#!/usr/bin/env node\n')).toBe(true);
    expect(isHandWrittenSource('src/generated/program/program.ts', '')).toBe(false);
    expect(isHandWrittenSource('native-runner/generated/program_generated.h', '')).toBe(false);
    expect(isHandWrittenSource('python-bridge/requirements.lock', '')).toBe(false);
    expect(isHandWrittenSource('LICENSE', 'text')).toBe(false);
  });

  it(`names a file past ${MAX_LINES} lines and exits 1; at the limit it passes`, () => {
    const root = repo({ 'src/ok.ts': lines(MAX_LINES), 'src/long.ts': lines(MAX_LINES + 1), 'docs/long.md': lines(900) });
    expect(oversizedSources(root)).toEqual([{ path: 'src/long.ts', lines: MAX_LINES + 1 }]);
    // The script checks the repository it lives in: run a copy inside the temp one.
    mkdirSync(join(root, 'scripts'));
    writeFileSync(join(root, 'scripts/line-limit.mjs'), readFileSync(script));
    const there = spawnSync(process.execPath, [join(root, 'scripts/line-limit.mjs')], { cwd: root, encoding: 'utf8' });
    expect(there.status).toBe(1);
    expect(there.stderr).toContain(`src/long.ts: ${MAX_LINES + 1} lines (the limit is ${MAX_LINES}`);
  });

  it('holds this repository: no hand-written source file over the limit', () => {
    const root = fileURLToPath(new URL('..', import.meta.url));
    expect(oversizedSources(root)).toEqual([]);
  });
});
