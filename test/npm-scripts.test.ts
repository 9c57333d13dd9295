// The package's npm scripts run: every script that starts a file names one
// that exists, and `npm run bench` lists and runs the benchmark scripts.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './helpers/bridge.js';

// The scripts of bench/ that are not benchmarks: shared helpers, the runner
// itself, and a program writer for the GPU machine.
const NOT_BENCHMARKS = ['lib.ts', 'run.ts', 'make-six-engines.ts', 'segment-program.ts'];
const scripts = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

describe('npm scripts', () => {
  it.each(Object.entries(scripts))('%s names files that exist', (_name, command) => {
    const files = [...command.matchAll(/\b(?:tsx|node)\s+([\w./-]+\.(?:ts|mjs|js))/g)].map((m) => m[1]);
    for (const f of files) expect(existsSync(join(REPO, f)), `${command}: ${f}`).toBe(true);
  });

  it('npm run bench -- --list names every benchmark script of bench/, and only those', () => {
    const r = spawnSync('npm', ['run', '--silent', 'bench', '--', '--list'], { cwd: REPO, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const named = [...r.stdout.matchAll(/\(bench\/([\w-]+\.ts)\)/g)].map((m) => m[1]);
    const benches = readdirSync(join(REPO, 'bench')).filter((f) => f.endsWith('.ts') && !NOT_BENCHMARKS.includes(f));
    for (const f of NOT_BENCHMARKS) expect(existsSync(join(REPO, 'bench', f)), f).toBe(true);
    expect(named.sort()).toEqual(benches.sort());
  });

  it('npm run bench -- NAME refuses an unknown name with the list, exit 2', () => {
    const r = spawnSync('npm', ['run', '--silent', 'bench', '--', 'no-such-bench'], { cwd: REPO, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/no benchmark named "no-such-bench"/);
  });
});
