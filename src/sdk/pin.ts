// The executorch wheel the native runner's C++ SDK comes from:
// python-bridge/executorch-sdk.json pins one wheel per platform by URL and
// sha256 (python-bridge/tools/relock-sdk.mjs writes it from
// requirements.lock's executorch version and PyPI), so the runner is built
// against exactly the ExecuTorch `trtx export` writes programs with, without
// installing the Python environment.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { arch as osArch, platform as osPlatform } from 'node:os';
import { TrtxError } from '../util/errors.js';

export interface SdkWheel {
  file: string;
  url: string;
  sha256: string;
  size: number;
}

export interface SdkPin {
  path: string;
  version: string;
  /** Keyed by `${platform}-${arch}` (node:os: linux-x64). */
  wheels: Record<string, SdkWheel>;
}

/** python-bridge/executorch-sdk.json, found by walking up from this module (bundled or not). */
export function defaultPinPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'python-bridge', 'executorch-sdk.json');
    if (existsSync(candidate)) return candidate;
    const up = dirname(dir);
    if (up === dir) return join(dirname(fileURLToPath(import.meta.url)), 'python-bridge', 'executorch-sdk.json');
    dir = up;
  }
}

const HEX64 = /^[0-9a-f]{64}$/;

export function readSdkPin(path: string = defaultPinPath()): SdkPin {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new TrtxError('SDK_PIN_INVALID', path, `the ExecuTorch SDK pin cannot be read: ${(e as Error).message}`);
  }
  const r = raw as { version?: unknown; wheels?: Record<string, Partial<SdkWheel>> };
  const bad = (why: string) => new TrtxError('SDK_PIN_INVALID', path, why);
  if (typeof r.version !== 'string' || typeof r.wheels !== 'object' || r.wheels === null) throw bad('no version or wheels');
  for (const [platform, w] of Object.entries(r.wheels)) {
    const ok =
      typeof w.file === 'string' &&
      /^[\w.+-]+\.whl$/.test(w.file) &&
      typeof w.url === 'string' &&
      w.url.startsWith('https://') &&
      typeof w.sha256 === 'string' &&
      HEX64.test(w.sha256) &&
      Number.isSafeInteger(w.size) &&
      (w.size ?? 0) > 0;
    if (!ok) throw bad(`the wheel of ${platform} needs a .whl file name, an https URL, a sha256 and a size`);
  }
  return { path, version: r.version, wheels: r.wheels as Record<string, SdkWheel> };
}

export function currentPlatform(): string {
  // node:os answers as process.platform and process.arch do.
  return `${osPlatform()}-${osArch()}`;
}

/** The wheel for this machine, or a usage error naming the platforms ExecuTorch ships a runtime for. */
export function wheelFor(pin: SdkPin, platform: string = currentPlatform()): SdkWheel {
  const w = pin.wheels[platform];
  if (!w) {
    throw new TrtxError(
      'SDK_PLATFORM_UNSUPPORTED',
      platform,
      `executorch ${pin.version} publishes no C++ SDK for ${platform} (pinned: ${Object.keys(pin.wheels).join(', ')})`,
      { hint: 'run trtx verify and demo on one of those platforms, or give a runner with TRTX_RUNNER_BIN' },
    );
  }
  return w;
}
