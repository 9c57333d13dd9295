// Shared setup for the bridge tests: where the test doubles live, the
// environment that puts them on the bridge's PYTHONPATH (only the tests do
// this), fixture model files, and the call log the doubles write.

import { execFileSync } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { BridgeRequest } from '../../src/bridge/protocol.js';
import { BridgeFailure } from '../../src/bridge/run.js';
import { tempDir } from './temp.js';

export const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const DOUBLES_DIR = join(REPO, 'test', 'doubles', 'python');
export const MODELS_DIR = join(REPO, 'test', 'doubles', 'models');
export const CORPUS_DIR = resolve(process.env.TRTX_PTE_CORPUS ?? join(REPO, '..', 'shared', 'pte-corpus'));
export const FIXTURE_PTE = join(CORPUS_DIR, 'add.pte');
export const PYTHON = 'python3';
/** The named test-double interpreter: python3 with the fake torch / torch_tensorrt / executorch on its path. */
export const DOUBLE_PYTHON = join(REPO, 'test', 'doubles', 'python-with-doubles');

/** This process's environment as a run's (src/util/env.ts) with no interpreter named: trtx's managed one, in the cache TRTX_CACHE_DIR names. */
export const withoutNamedPython = (): Record<string, string | undefined> => ({ ...process.env, TRTX_PYTHON: undefined });

export interface Workspace {
  dir: string;
  calls: string;
  out: string;
  file(name: string): string;
}

/** A temp folder holding every fixture model file (see test/doubles/make_archives.py), removed after the test file. */
export function workspace(): Workspace {
  if (!existsSync(FIXTURE_PTE)) throw new Error(`fixture program ${FIXTURE_PTE} not found; set TRTX_PTE_CORPUS`);
  const dir = tempDir('bridge');
  execFileSync(PYTHON, [join(REPO, 'test', 'doubles', 'make_archives.py'), dir]);
  return { dir, calls: join(dir, 'calls.jsonl'), out: join(dir, 'out.pte'), file: (name) => join(dir, name) };
}

/** Environment that runs the bridge against the doubles, recording calls in `ws.calls`. */
export function doubleEnv(ws: Workspace, knobs: Record<string, string> = {}): Record<string, string> {
  return { PYTHONPATH: DOUBLES_DIR, TRTX_DOUBLE_CALLS: ws.calls, TRTX_DOUBLE_PROGRAM: FIXTURE_PTE, ...knobs };
}

export interface Call {
  call: string;
  args: Record<string, unknown>;
}

export function readCalls(ws: Workspace): Call[] {
  if (!existsSync(ws.calls)) return [];
  return readFileSync(ws.calls, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Call);
}

export function exportRequest(ws: Workspace, over: Partial<BridgeRequest> = {}): BridgeRequest {
  return {
    protocol: 2,
    model: ws.file('model.pt2'),
    output: ws.out,
    methods: null,
    budget_bytes: null,
    zero_copy_kv: false,
    allow_pickle: false,
    check_only: false,
    engine: 'tensorrt',
    reference: null,
    ...over,
  };
}

/** Whether a pid names a live (not zombie) process. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Polls `check` every `everyMs` until it holds or `limitMs` passes; returns
 * whether it held. Tests that must act at a moment (a signal while a command
 * is at one step) poll every few milliseconds.
 */
export async function eventually(check: () => boolean, limitMs = 10_000, everyMs = 25): Promise<boolean> {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return check();
}

/** The BridgeFailure `p` rejects with; any other rejection, or none, fails the test. */
export async function failure(p: Promise<unknown>): Promise<BridgeFailure> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(BridgeFailure);
    return e as BridgeFailure;
  }
  throw new Error('expected the bridge to fail');
}
