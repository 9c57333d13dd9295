// Benchmark: `npm test` of two commits back to back, each in a clean clone of
// this repository (npm ci, then npm test as .ci/run runs it), with the same
// environment (pass CI's: TRTX_PTE_CORPUS, TRTX_CACHE_DIR, TRTX_RUNNER_BIN,
// TRTX_RUNNER_ASAN). This machine's speed changed by up to 45% within an
// hour (bench/README.md), so a change to the suite's time is only measured
// against the commit before it, run right after it.
//
//   npx tsx bench/npm-test-ab.ts [OLD [NEW]]    (HEAD~1 and HEAD by default; 20 minutes and more on 2 cores)
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(fileURLToPath(new URL('..', import.meta.url)));
const [oldRef = 'HEAD~1', newRef = 'HEAD'] = process.argv.slice(2);
const work = mkdtempSync(join(tmpdir(), 'trtx-npm-test-ab-'));
// Some tests run trtx as another user (a folder it may not write): the clones must be readable to it.
chmodSync(work, 0o755);

function must(cmd: string, args: string[], cwd: string): void {
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
}

interface Report {
  numPassedTests: number;
  numFailedTests: number;
  testResults: { startTime: number; endTime: number }[];
}

function npmTest(ref: string): string {
  const clone = join(work, ref.replace(/[^A-Za-z0-9]/g, '_'));
  must('git', ['clone', '-q', repo, clone], work);
  must('git', ['checkout', '-q', ref], clone);
  must('npm', ['ci', '--no-audit', '--no-fund', '--loglevel', 'error'], clone);
  mkdirSync(join(clone, '.cache'), { recursive: true });
  const t0 = performance.now();
  const r = spawnSync('npm', ['test', '--', '--reporter=dot', '--reporter=json', '--outputFile=.cache/vitest-report.json'], {
    cwd: clone,
    stdio: 'ignore',
  });
  const seconds = (performance.now() - t0) / 1000;
  const report = JSON.parse(readFileSync(join(clone, '.cache', 'vitest-report.json'), 'utf8')) as Report;
  const perFile = report.testResults.reduce((s, f) => s + (f.endTime - f.startTime) / 1000, 0);
  return `${ref}: npm test exit ${r.status}, ${seconds.toFixed(0)} s, ${report.numPassedTests} passed, ${report.numFailedTests} failed, per-file time ${perFile.toFixed(0)} s`;
}

try {
  console.log(`command: npx tsx bench/npm-test-ab.ts ${oldRef} ${newRef}`);
  for (const ref of [oldRef, newRef]) console.log(`  ${npmTest(ref)}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
