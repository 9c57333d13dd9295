// Progress lines while the native runner builds: configuring, then CMake's
// percent a line per tenth; nothing under --quiet or --json, nothing for a
// cached or prebuilt runner.
import { describe, expect, it } from 'vitest';
import { runnerBuildProgress } from '../src/cli/runner-progress.js';
import type { RunnerProgress } from '../src/runner/index.js';

function lines(opts: { quiet: boolean; json: boolean }, events: RunnerProgress[], times?: number[]): string[] {
  const out: string[] = [];
  const log = { info: (m: string) => out.push(m) } as never;
  let i = 0;
  const on = runnerBuildProgress({ ...opts, log }, () => (times ? times[i] : 0));
  for (; i < events.length; i++) on(events[i]);
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

  it('shows a step that says nothing new every 4 s (the heartbeat), never more often', () => {
    const tick = (s: number): RunnerProgress => ({
      phase: 'build',
      message: `compiling the native runner: 12% (${s}s)`,
      percent: 12,
      tick: true,
    });
    const events: RunnerProgress[] = [
      { phase: 'sdk', message: 'downloading the ExecuTorch SDK (18 MiB)' },
      { phase: 'sdk', message: 'downloading the ExecuTorch SDK: 1 MiB of 18 MiB' },
      { phase: 'sdk', message: 'downloading the ExecuTorch SDK: 9 MiB of 18 MiB' },
      { phase: 'build', message: 'compiling the native runner: 12%', percent: 12 },
      tick(1),
      tick(2),
      tick(3),
      tick(4),
      tick(5),
    ];
    const ms = [0, 2000, 4100, 5000, 6000, 7000, 8000, 9000, 9100];
    expect(lines({ quiet: false, json: false }, events, ms)).toEqual([
      'downloading the ExecuTorch SDK (18 MiB)',
      'downloading the ExecuTorch SDK: 9 MiB of 18 MiB',
      'compiling the native runner: 12%',
      'compiling the native runner: 12% (4s)',
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
