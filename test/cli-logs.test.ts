// Log lines on stderr: `trtx warn: message` on a terminal; the same after an
// ISO 8601 time when stderr is a pipe or a file (a CI log); pino's JSON
// lines only with --log-format json. The runs are in process (helpers/cli.ts),
// whose stderr is a pipe's: not a terminal.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { multiEngine } from '../src/examples/programs.js';
import { formatLogLine } from '../src/cli/context.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('cli-logs');
let runs = 0;

/** A rewrite's stderr, which is no terminal (a pipe), each run on files of its own so that the cases go at once. */
async function rewriteStderr(...flags: string[]): Promise<string> {
  const n = runs++;
  const program = join(dir, `multi-engine-${n}.pte`);
  await writeFixture(program, multiEngine(3));
  const r = await runCli(['rewrite', program, '-o', join(dir, `out-${n}.pte`), '--budget', '8GiB', ...flags]);
  expect(r.code, r.stderr).toBe(0);
  return r.stderr;
}

describe.concurrent('log lines', () => {
  it('piped: readable lines, each after its time', { timeout: 60_000 }, async () => {
    const lines = (await rewriteStderr()).trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z trtx warn: TRT_BUDGET_MULTI_ENGINE: program: weight_streaming_budget applies per engine: 3 engines x 8 GiB = 24 GiB may be resident$/,
    );
    const time = Date.parse(lines[0].split(' ')[0]);
    expect(Math.abs(Date.now() - time)).toBeLessThan(60_000);
  });

  it('--log-format json: one JSON record per line, with an ISO time', { timeout: 60_000 }, async () => {
    const lines = (await rewriteStderr('--log-format', 'json')).trim().split('\n');
    const rec = JSON.parse(lines[0]) as { level: number; time: string; msg: string };
    expect(rec.level).toBe(40);
    expect(rec.msg).toMatch(/^TRT_BUDGET_MULTI_ENGINE: /);
    expect(rec.time).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
  });

  it('--quiet: no warning lines', { timeout: 60_000 }, async () => {
    expect(await rewriteStderr('--quiet')).toBe('');
  });

  it('the text form on a terminal has no time; several lines stay under the first', () => {
    expect(formatLogLine({ level: 40, time: 0, msg: 'careful' }, false)).toBe('trtx warn: careful\n');
    expect(formatLogLine({ level: 30, time: 0, msg: 'a\nb' }, true)).toBe('1970-01-01T00:00:00.000Z trtx info: a\n  b\n');
  });
});
