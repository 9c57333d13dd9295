// The bridge's import check, which says what to install when a package is
// missing. Which Python runs the bridge is src/pyenv's answer
// (ensurePythonEnv): the one --python or TRTX_PYTHON names, else trtx's
// managed environment.

import { TrtxError } from '../util/errors.js';
import { PROTOCOL_VERSION, type BridgeRequest, type CheckResult, type EngineKind } from './protocol.js';
import { runBridge, type RunBridgeOptions } from './run.js';

export function checkRequest(engine: EngineKind = 'tensorrt'): BridgeRequest {
  return {
    protocol: PROTOCOL_VERSION,
    model: '',
    output: '',
    methods: null,
    budget_bytes: null,
    zero_copy_kv: false,
    allow_pickle: false,
    check_only: true,
    engine,
  };
}

/**
 * Runs the bridge's import check: resolves with versions and capabilities, or
 * rejects with BRIDGE_IMPORT_MISSING (its hint names what to `pip install`),
 * BRIDGE_PYTHON_NOT_FOUND, and the other bridge failures.
 */
export async function checkPython(opts: RunBridgeOptions & { engine?: EngineKind }): Promise<CheckResult> {
  const result = await runBridge(checkRequest(opts.engine), opts);
  if (result.mode !== 'check') {
    throw new TrtxError('BRIDGE_PROTOCOL', opts.python, `the import check answered with a ${result.mode} result`, {
      kind: 'usage',
      hint: 'The python-bridge folder does not match this trtx; reinstall trtx.',
    });
  }
  return result;
}
