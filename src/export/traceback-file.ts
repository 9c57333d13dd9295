// Where the Python traceback of a failed export goes, so the hint can name a
// file that is there instead of promising a traceback stderr does not hold
// (the bridge logs tracebacks only at --log-level debug). The bridge writes
// the traceback of the failure it reports to the path in
// TRTX_BRIDGE_TRACEBACK (python-bridge/trtx_bridge/__main__.py); trtx names
// it in the hint when it exists.
//
// Policy (docs/exit-codes.md): one file per model, in trtx's cache
// ($TRTX_CACHE_DIR, else ~/.cache/trtx) under tracebacks/, named after the
// model file and a digest of its full path, so it stays where the hint said
// until the next export of the same model, which removes it first and, when
// it succeeds, leaves none. Never beside the output: a failed export leaves
// nothing in the user's folder.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { TrtxError } from '../util/errors.js';
import { splitModelRef } from './model-file.js';

export const TRACEBACK_ENV = 'TRTX_BRIDGE_TRACEBACK';

/** The traceback file of `model`'s exports (an absolute path; its folder made, a stale file removed). */
export function prepareTracebackFile(model: string, cacheRoot: string): string {
  const path = splitModelRef(model).path;
  const digest = createHash('sha256').update(model).digest('hex').slice(0, 12);
  const name = basename(path)
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 80);
  const dir = join(cacheRoot, 'tracebacks');
  const file = join(dir, `export-${name}-${digest}.txt`);
  try {
    mkdirSync(dir, { recursive: true });
    rmSync(file, { force: true });
  } catch {
    // A cache that cannot be written: the bridge cannot write there either, and the hint will not name it.
  }
  return file;
}

/** `e` with the traceback file named in its hint when the bridge wrote one. */
export function withTraceback(e: unknown, file: string): unknown {
  if (!(e instanceof TrtxError) || !existsSync(file) || statSync(file).size === 0) return e;
  const named = `The Python traceback is in ${file}.`;
  return new TrtxError(e.code, e.location, e.message, { hint: e.hint ? `${e.hint} ${named}` : named, diagnostics: e.diagnostics });
}

export function removeTracebackFile(file: string): void {
  rmSync(file, { force: true });
}
