// Progress lines while the native runner builds: configuring, then CMake's
// percent a line per tenth; nothing under --quiet or --json, nothing for a
// cached or prebuilt runner.
import { describe, expect, it } from 'vitest';
import { runnerBuildProgress } from '../src/cli/runner-progress.js';
import type { RunnerProgress } from '../src/runner/index.js';

function lines(opts: { quiet: boolean; json: boolean }, events: RunnerProgress[]): string[] {
  const out: string[] = [];
  const log = { info: (m: string) => out.push(m) } as never;
  const on = runnerBuildProgress({ ...opts, log });
  for (const e of events) on(e);
  return out;
}

const build: RunnerProgress[] = [
  { phase: 'configure', message: 'configuring the native runner (CPU, ExecuTorch runtime from the Python environment)' },
  { phase: 'build', message: 'compiling the native runner (CPU executors, 2 jobs)', percent: 0 },
  ...[3, 7, 12, 15, 25, 26, 48, 90, 99, 100].map((p): RunnerProgress => ({
    phase: 'build',
    message: `compiling the native runner: ${p}%`,
    percent: p,
  })),
  { phase: 'ready', message: 'native runner ready: /x/trtx-runner' },
];

describe('runner build progress', () => {
  it('says it configures, then compiles with the percent, a line per tenth at most', () => {
    expect(lines({ quiet: false, json: false }, build)).toEqual([
      'configuring the native runner (CPU, ExecuTorch runtime from the Python environment)',
      'compiling the native runner (CPU executors, 2 jobs)',
      'compiling the native runner: 12%',
      'compiling the native runner: 25%',
      'compiling the native runner: 48%',
      'compiling the native runner: 90%',
      'compiling the native runner: 100%',
    ]);
  });

  it('is silent under --quiet and --json, and for a cached or prebuilt runner', () => {
    expect(lines({ quiet: true, json: false }, build)).toEqual([]);
    expect(lines({ quiet: false, json: true }, build)).toEqual([]);
    expect(
      lines({ quiet: false, json: false }, [
        { phase: 'cached', message: 'using the cached native runner' },
        { phase: 'prebuilt', message: 'p' },
      ]),
    ).toEqual([]);
  });
});
