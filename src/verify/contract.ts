// Whether verify's runs initialise device-resident state, and why.
//
// Device arenas are not cleared (ExecuTorch leaves them as cudaMalloc returns
// them; verify fills them with 0xFF), so a program that keeps state in device
// memory is right only with an application that initialises it. For a
// zero-copy program that is its contract (docs/zero-copy-kv.md):
// `rewrite --zero-copy-kv` moves the caches into device memory and the duty
// to initialise them to the application, and check names it
// (RT_DEVICE_STATE_UNINITIALIZED). So a zero-copy program is judged the same
// whether verify derived it (the twin of a staged program) or was given it
// (the file that rewrite wrote): its runs initialise the caches, as its
// application does, and one more run leaves them poisoned to show whether
// that duty is real (a named check, ok with its evidence, never a failure).
// Judging the given file poisoned would fail the very bytes whose derived
// twin passes. The user decides otherwise with --init-device-buffers (the
// application initialises: no poisoned run) or --no-init-device-buffers (it
// does not: every run poisoned, and a program that reads its device state
// before writing it fails).

import type { CheckResult } from '../checks/run.js';
import type { VerifyMode } from './variants.js';

export interface InitPlan {
  /** Whether runs initialise device-resident buffers unless told otherwise. */
  runInit: boolean;
  /** The zero-copy contract applies: runs initialise the caches, and one more run leaves them poisoned. */
  contract: boolean;
}

/** Whether the program keeps mutable state in device memory, as check found it (a zero-copy program). */
export function keepsDeviceState(checked: CheckResult): boolean {
  return checked.diagnostics.some((d) => d.code === 'RT_DEVICE_STATE_UNINITIALIZED');
}

/**
 * `asked`: --init-device-buffers (true), --no-init-device-buffers (false), or
 * neither. `checked`: the check of the program verify was given.
 */
export function initPlan(mode: VerifyMode, checked: CheckResult, asked: boolean | undefined): InitPlan {
  if (asked !== undefined) return { runInit: asked, contract: false };
  const contract = mode === 'staged-vs-zero-copy' || keepsDeviceState(checked);
  return { runInit: contract, contract };
}
