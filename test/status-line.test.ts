// A progress line on a terminal is cleared before anything else is written,
// so a later error or log line never lands on its end (issue 25: "...putting
// copy-back mutations firsterror: BRIDGE_FINALIZE").
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startProgress } from '../src/cli/progress.js';
import { makeCtx, reportError } from '../src/cli/context.js';
import { newSession } from '../src/cli/session.js';
import { TrtxError } from '../src/util/errors.js';
import { ReportBudget } from '../src/util/report-budget.js';

const CLEAR = '\r\u001b[2K';

afterEach(() => vi.restoreAllMocks());

/** A run whose stdout and stderr are one terminal, and what is written to it from `capture()` on. */
function onTerminal() {
  let writes: string[] | null = null;
  const stream = { isTTY: true, write: (text: string) => writes?.push(text) };
  const session = newSession({ stdout: stream, stderr: stream, env: {}, cwd: process.cwd() });
  const ctx = makeCtx({}, session, new ReportBudget());
  const capture = () => (writes = []);
  return { session, ctx, capture };
}

describe('the terminal status line', () => {
  it('is cleared before an error that follows it', () => {
    vi.spyOn(Date, 'now').mockReturnValue(0);
    const { session, ctx, capture } = onTerminal();
    const bar = startProgress(ctx, 'exporting');
    const writes = capture();
    vi.spyOn(Date, 'now').mockReturnValue(5_000);
    bar.update(50, 100, 'finalize: putting copy-back mutations first');
    expect(writes.join('')).toContain('putting copy-back mutations first');
    reportError(new TrtxError('BRIDGE_FINALIZE', 'model.pt2', 'to_executorch failed'), false, session);
    const all = writes.join('');
    const at = all.indexOf('error: ');
    expect(at).toBeGreaterThan(0);
    // The line is erased between the progress text and the error.
    expect(all.slice(0, at).endsWith(CLEAR)).toBe(true);
  });

  it('is cleared before a printed result, and nothing is cleared when no line is drawn', () => {
    vi.spyOn(Date, 'now').mockReturnValue(0);
    const { ctx, capture } = onTerminal();
    const bar = startProgress(ctx, 'writing');
    const writes = capture();
    vi.spyOn(Date, 'now').mockReturnValue(5_000);
    bar.update(1, 2);
    ctx.print('wrote out.pte');
    expect(writes.slice(-2)).toEqual([CLEAR, 'wrote out.pte\n']);
    ctx.print('again');
    expect(writes.at(-1)).toBe('again\n');
    expect(writes.at(-2)).toBe('wrote out.pte\n');
  });
});
