// Downloads one pinned file over https into a file, hashing it on the way:
// the bytes are accepted only when their sha256 and size are the pin's.
// Progress (bytes so far) is reported at most every REPORT_MS while bytes
// arrive and, while the connection stalls, once a second; no data for
// STALL_MS aborts.

import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { TrtxError } from '../util/errors.js';
import { startTicker } from '../util/ticker.js';
import type { SdkWheel } from './pin.js';

const STALL_MS = 60_000;
const REPORT_MS = 250;

export type Fetch = (url: string, init: { signal: AbortSignal }) => Promise<Response>;

export interface DownloadOptions {
  onBytes?: (done: number, total: number, tick: boolean) => void;
  signal?: AbortSignal;
  fetch?: Fetch;
}

function failed(url: string, why: string): TrtxError {
  return new TrtxError('SDK_DOWNLOAD_FAILED', url, `downloading the ExecuTorch SDK wheel failed: ${why}`, {
    hint: 'PyPI (files.pythonhosted.org) must be reachable; offline, download the pinned wheel (python-bridge/executorch-sdk.json) and name it with TRTX_EXECUTORCH_WHEEL',
  });
}

/** Fetches `wheel.url` into `path`; returns its sha256 (hex) once the size matches. */
export async function downloadTo(wheel: SdkWheel, path: string, opts: DownloadOptions = {}): Promise<string> {
  const stall = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stall.signal]) : stall.signal;
  let timer = setTimeout(() => stall.abort(), STALL_MS);
  const alive = () => {
    clearTimeout(timer);
    timer = setTimeout(() => stall.abort(), STALL_MS);
  };
  let done = 0;
  let reported = 0;
  const stopTicker = startTicker(1000, () => opts.onBytes?.(done, wheel.size, true));
  const hash = createHash('sha256');
  const out = await open(path, 'wx', 0o644);
  try {
    let res: Response;
    try {
      res = await (opts.fetch ?? fetch)(wheel.url, { signal });
    } catch (e) {
      opts.signal?.throwIfAborted();
      throw failed(wheel.url, stall.signal.aborted ? `no answer within ${STALL_MS / 1000}s` : String((e as Error).cause ?? e));
    }
    if (!res.ok || !res.body) throw failed(wheel.url, `the server answered ${res.status} ${res.statusText}`);
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        alive();
        done += chunk.length;
        if (done > wheel.size) throw failed(wheel.url, `more than the pinned ${wheel.size} bytes`);
        hash.update(chunk);
        await out.write(chunk);
        if (Date.now() - reported >= REPORT_MS || done === wheel.size) {
          reported = Date.now();
          opts.onBytes?.(done, wheel.size, false);
        }
      }
    } catch (e) {
      if (e instanceof TrtxError) throw e;
      opts.signal?.throwIfAborted();
      throw failed(wheel.url, stall.signal.aborted ? `no data for ${STALL_MS / 1000}s` : String((e as Error).message));
    }
    if (done !== wheel.size) throw failed(wheel.url, `${done} bytes where the pin says ${wheel.size}`);
    return hash.digest('hex');
  } finally {
    clearTimeout(timer);
    stopTicker();
    await out.close();
  }
}
