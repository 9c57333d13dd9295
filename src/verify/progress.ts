// What verify says while it runs (issue 40: "verify talks"): the plan first
// -- how many runs of how many steps, and what each run is -- then, while a
// run is in flight, where it is: its place among the runs, its step (the
// runner's --progress lines) and the time it has taken, at every step and at
// least every HEARTBEAT_MS. The CLI writes these to stderr, and nothing under
// --json.

import { startTicker } from '../util/ticker.js';

export const HEARTBEAT_MS = 5000;

export type VerifyProgress =
  | {
      kind: 'plan';
      /** The runs that will run, in order. */
      runs: string[];
      /** A run that follows only when the first runs show it is needed; null when none can. */
      conditional: string | null;
      steps: number;
      methods: string[];
    }
  | {
      kind: 'run';
      /** 1-based place among the runs. */
      index: number;
      total: number;
      label: string;
      /** Steps finished so far. */
      step: number;
      steps: number;
      elapsedMs: number;
      done: boolean;
    };

/** A run's progress: reported at each finished step and every HEARTBEAT_MS until stopped. */
export function trackRun(
  report: (p: VerifyProgress) => void,
  run: { index: number; total: number; label: string; steps: number },
): { step: (n: number) => void; stop: () => void } {
  const started = Date.now();
  let step = 0;
  const say = (done: boolean) => report({ kind: 'run', ...run, step, elapsedMs: Date.now() - started, done });
  say(false);
  const stopTicker = startTicker(HEARTBEAT_MS, () => say(false));
  return {
    step: (n) => {
      step = n;
      say(false);
    },
    stop: () => {
      stopTicker();
      say(true);
    },
  };
}

/** A run's name in the plan and in progress lines. */
export function runLabel(variant: string, callerStream: boolean, freshState: boolean, init: boolean, initDefault: boolean): string {
  const parts = [variant, `stream ${callerStream ? 'on' : 'off'}`];
  if (freshState) parts.push('fresh caches');
  if (init !== initDefault) parts.push(init ? 'device buffers initialised' : 'device buffers left poisoned');
  return parts.join(', ');
}
