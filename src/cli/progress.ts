// Progress for work that can take more than a second: a redrawn line on a
// terminal (stderr), otherwise a log line when the work starts and ends.
// Nothing shows for work that finishes within the first second.

import type { Ctx } from './context.js';
import { formatIEC } from '../util/size.js';
import { escapeControls } from '../util/escape.js';

export interface Progress {
  update(done: number, total?: number, note?: string): void;
  done(note?: string): void;
}

const DELAY_MS = 1000;

export function startProgress(ctx: Ctx, label: string, opts: { bytes?: boolean } = {}): Progress {
  const started = Date.now();
  const tty = ctx.stderrIsTTY && !ctx.quiet && !ctx.json;
  let shown = false;
  let last = 0;
  const fmt = (n: number) => (opts.bytes ? formatIEC(BigInt(Math.round(n))) : String(n));
  return {
    update(done, total, note) {
      const now = Date.now();
      if (now - started < DELAY_MS || now - last < 100) return;
      last = now;
      const pct = total ? ` ${Math.floor((100 * done) / total)}%` : '';
      const amount = total ? ` (${fmt(done)} of ${fmt(total)})` : '';
      if (tty) {
        const width = 24;
        const filled = total ? Math.round((width * done) / total) : 0;
        const bar = total ? ` [${'#'.repeat(filled)}${'.'.repeat(width - filled)}]` : '';
        ctx.terminal.drawStatusLine(`${escapeControls(label)}${bar}${pct}${amount}${note ? ' ' + escapeControls(note) : ''}`);
      } else if (!shown) {
        ctx.log.info(`${label}...`);
      }
      shown = true;
    },
    done(note) {
      if (!shown) return;
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      if (tty) ctx.terminal.clearStatusLine();
      ctx.log.info(`${label} done in ${secs}s${note ? ': ' + note : ''}`);
    },
  };
}
