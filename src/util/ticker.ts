// A heartbeat for long steps: calls `tick` with the elapsed milliseconds every
// `everyMs` until stopped, so a step whose own output stalls (one large
// compile, a slow download, pip resolving) still reports that it is alive.
// The timer is unref'd: it never keeps the process running by itself.

export function startTicker(everyMs: number, tick: (elapsedMs: number) => void): () => void {
  const started = Date.now();
  const timer = setInterval(() => tick(Date.now() - started), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** "1m 05s", "42s": how long a step has run, for progress lines. */
export function formatElapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
}
