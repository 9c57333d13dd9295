// Which Python runs the bridge, and the import check that says what to
// install when a package is missing.

import { TrtxError } from '../util/errors.js';
import { PROTOCOL_VERSION, type BridgeRequest, type CheckResult } from './protocol.js';
import { runBridge, type RunBridgeOptions } from './run.js';

export type PythonSource = '--python' | 'TRTX_PYTHON' | 'default';

export interface PythonChoice {
  /** An executable path or a command name looked up on PATH. */
  command: string;
  source: PythonSource;
}

/** `--python`, else `TRTX_PYTHON`, else `python3`. */
export function resolvePython(opts: { python?: string; env?: NodeJS.ProcessEnv } = {}): PythonChoice {
  const env = opts.env ?? process.env;
  if (opts.python !== undefined) {
    if (opts.python.trim() === '') throw new TrtxError('BRIDGE_PYTHON_INVALID', '--python', 'empty path', { kind: 'usage' });
    return { command: opts.python, source: '--python' };
  }
  const fromEnv = env.TRTX_PYTHON;
  if (fromEnv !== undefined && fromEnv.trim() !== '') return { command: fromEnv, source: 'TRTX_PYTHON' };
  return { command: 'python3', source: 'default' };
}

export function checkRequest(): BridgeRequest {
  return {
    protocol: PROTOCOL_VERSION,
    model: '',
    output: '',
    methods: null,
    budget_bytes: null,
    zero_copy_kv: false,
    allow_pickle: false,
    check_only: true,
  };
}

/**
 * Runs the bridge's import check: resolves with versions and capabilities, or
 * rejects with BRIDGE_IMPORT_MISSING (its hint names what to `pip install`),
 * BRIDGE_PYTHON_NOT_FOUND, and the other bridge failures.
 */
export async function checkPython(opts: RunBridgeOptions): Promise<CheckResult> {
  const result = await runBridge(checkRequest(), opts);
  if (result.mode !== 'check') {
    throw new TrtxError('BRIDGE_PROTOCOL', opts.python, `the import check answered with a ${result.mode} result`, {
      kind: 'usage',
      hint: 'The python-bridge folder does not match this trtx; reinstall trtx.',
    });
  }
  return result;
}
