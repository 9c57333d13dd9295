// The lock file that pins trtx's managed Python environment
// (python-bridge/requirements.lock, made by python-bridge/tools/relock.sh).
// Its hash names the environment's folder, so a changed pin means a fresh
// environment and an unchanged one is reused.

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bridgePackageDir } from '../bridge/env.js';
import { TrtxError } from '../util/errors.js';
import type { PythonProbe } from './probe.js';

export const LOCK_FILE_NAME = 'requirements.lock';

export interface PythonLock {
  path: string;
  /** sha256 of the file's bytes, first 16 hex digits. */
  hash: string;
  /** Normalised distribution name (PEP 503) -> exact version. */
  pins: Map<string, string>;
}

/** PEP 503 normalisation: `Jinja2`, `typing_extensions` -> `jinja2`, `typing-extensions`. */
export function normaliseDistName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/** `name==version` lines; comments and blank lines skipped; anything else is a broken lock. */
export function parseLock(text: string, path: string): Map<string, string> {
  const pins = new Map<string, string>();
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/#.*/, '').trim();
    if (line === '') return;
    const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)$/.exec(line);
    if (!m) {
      throw new TrtxError('PYENV_LOCK_INVALID', `${path}:${i + 1}`, `not an exact pin (name==version): ${JSON.stringify(raw)}`, {
        hint: 'regenerate it with python-bridge/tools/relock.sh',
      });
    }
    const [, name = '', version = ''] = m;
    pins.set(normaliseDistName(name), version);
  });
  return pins;
}

export async function readPythonLock(bridgeDir: string = bridgePackageDir()): Promise<PythonLock> {
  const path = join(bridgeDir, LOCK_FILE_NAME);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch {
    throw new TrtxError('PYENV_LOCK_MISSING', path, 'the Python lock file is not part of this installation');
  }
  return {
    path,
    hash: createHash('sha256').update(bytes).digest('hex').slice(0, 16),
    pins: parseLock(bytes.toString('utf8'), path),
  };
}

/** `2.13.0+cpu` satisfies `2.13.0`: a local build label (PEP 440) is the same release. */
export function sameRelease(installed: string, pinned: string): boolean {
  return installed === pinned || installed.split('+')[0] === pinned.split('+')[0];
}

/** A locked package the interpreter lacks (got null) or has at another release. */
export interface PinDifference {
  name: 'torch' | 'executorch';
  want: string;
  got: string | null;
}

/** The locked packages (torch, executorch) whose installed release differs from the pin, or that are missing. */
export function pinDifferences(lock: PythonLock, probe: PythonProbe): PinDifference[] {
  const out: PinDifference[] = [];
  for (const name of ['torch', 'executorch'] as const) {
    const want = lock.pins.get(name);
    const got = probe.packages[name];
    if (want && (!got || !sameRelease(got, want))) out.push({ name, want, got });
  }
  return out;
}
