// The ExecuTorch C++ SDK the native runner is built against, without the
// Python environment: the pinned executorch wheel (python-bridge/
// executorch-sdk.json, about 19 MB) is downloaded once, checked against its
// sha256, and its executorch/include, lib and share folders are unpacked into
// the cache, keyed by that hash. share/cmake/executorch-config.cmake finds
// the package root from its own location, so the unpacked folder is a
// CMAKE_PREFIX_PATH as the installed package is. Made under a lock, in a
// temporary folder renamed into place whole; nothing here prints.

import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { TrtxError } from '../util/errors.js';
import { trackPath } from '../util/cleanup.js';
import { ownPid } from '../util/os-process.js';
import { withLock } from '../util/lock.js';
import { defaultCacheRoot } from '../util/cache-dir.js';
import { inFolder, settingsOf, type Env } from '../util/env.js';
import { formatIEC } from '../util/size.js';
import { downloadTo, type Fetch } from './download.js';
import { readSdkPin, wheelFor, type SdkPin, type SdkWheel } from './pin.js';
import { zipEntries } from './zip.js';

export { readSdkPin, wheelFor, currentPlatform } from './pin.js';
export type { SdkPin, SdkWheel } from './pin.js';
export { zipEntries } from './zip.js';

export interface ExecutorchSdk {
  /** Pass as CMAKE_PREFIX_PATH: holds include/, lib/ and share/cmake/executorch-config.cmake. */
  root: string;
  include: string;
  lib: string;
  version: string;
  /** The wheel it was unpacked from, and that wheel's sha256. */
  wheel: string;
  sha256: string;
  /** True when this call made it. */
  created: boolean;
}

export type SdkProgress =
  | { phase: 'cached'; message: string }
  | { phase: 'waiting'; message: string }
  | { phase: 'download'; message: string; done: number; total: number; tick: boolean }
  | { phase: 'unpack'; message: string; done: number; total: number }
  | { phase: 'ready'; message: string };

export interface EnsureSdkOptions {
  /** Cache root; default the run's $TRTX_CACHE_DIR, else ~/.cache/trtx. */
  cacheDir?: string;
  /** The run's environment (util/env.ts): the defaults named $TRTX_... here come from it. */
  env?: Env;
  /** The run's folder: what a relative path in those defaults means (util/env.ts's pathSettingOf). */
  cwd?: string;
  /** Default python-bridge/executorch-sdk.json. */
  pin?: SdkPin;
  /** Default this machine's `${platform}-${arch}`. */
  platform?: string;
  /** A local copy of the pinned wheel to unpack instead of downloading; default the run's $TRTX_EXECUTORCH_WHEEL. */
  wheelFile?: string;
  onProgress?: (p: SdkProgress) => void;
  signal?: AbortSignal;
  fetch?: Fetch;
}

const MARKER = 'trtx-sdk.json';
const FOLDERS = ['include/', 'lib/', 'share/'];

export function sdkDir(pin: SdkPin, wheel: SdkWheel, cacheDir: string): string {
  return join(cacheDir, 'executorch-sdk', `${pin.version}-${wheel.sha256.slice(0, 16)}`);
}

function described(dir: string, pin: SdkPin, wheel: SdkWheel, created: boolean): ExecutorchSdk {
  return {
    root: dir,
    include: join(dir, 'include'),
    lib: join(dir, 'lib'),
    version: pin.version,
    wheel: wheel.file,
    sha256: wheel.sha256,
    created,
  };
}

function mismatch(where: string, got: string, wheel: SdkWheel): TrtxError {
  return new TrtxError('SDK_HASH_MISMATCH', where, `sha256 ${got}, but ${wheel.file} is pinned as ${wheel.sha256}`, {
    hint: 'the file is not the pinned wheel (a different build, or a damaged download); run again, or name the pinned wheel with TRTX_EXECUTORCH_WHEEL',
  });
}

/** Unpacks the SDK folders of the (already verified) wheel into `into`. */
async function unpack(wheelBytes: Buffer, into: string, progress: (p: SdkProgress) => void): Promise<void> {
  const entries = zipEntries(
    wheelBytes,
    FOLDERS.map((f) => `executorch/${f}`),
  );
  let done = 0;
  for (const e of entries) {
    const target = join(into, e.name.slice('executorch/'.length));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, e.data());
    if (e.mode & 0o111) await chmod(target, 0o755);
    done += 1;
    if (done % 20 === 0 || done === entries.length) {
      progress({
        phase: 'unpack',
        message: `unpacking the ExecuTorch SDK: ${done} of ${entries.length} files`,
        done,
        total: entries.length,
      });
    }
  }
  if (!existsSync(join(into, 'share', 'cmake', 'executorch-config.cmake')) || !existsSync(join(into, 'include', 'executorch'))) {
    throw new TrtxError('SDK_WHEEL_INVALID', 'executorch/share/cmake', 'the wheel holds no C++ SDK (include/executorch, share/cmake)', {});
  }
}

async function make(dir: string, pin: SdkPin, wheel: SdkWheel, opts: EnsureSdkOptions): Promise<void> {
  const progress = opts.onProgress ?? (() => {});
  const work = `${dir}.tmp-${ownPid}-${randomBytes(4).toString('hex')}`;
  const untrack = trackPath(work);
  try {
    await mkdir(work, { recursive: true });
    // Named as it was set; read in the run's folder.
    const local = opts.wheelFile ?? settingsOf(opts.env).TRTX_EXECUTORCH_WHEEL;
    let bytes: Buffer;
    if (local) {
      bytes = await readFile(inFolder(local, opts.cwd)).catch((e: NodeJS.ErrnoException) => {
        throw new TrtxError('SDK_DOWNLOAD_FAILED', local, `TRTX_EXECUTORCH_WHEEL cannot be read (${e.code ?? e.message})`, {});
      });
      const got = createHash('sha256').update(bytes).digest('hex');
      if (got !== wheel.sha256) throw mismatch(local, got, wheel);
    } else {
      const total = formatIEC(BigInt(wheel.size));
      progress({
        phase: 'download',
        message: `downloading the ExecuTorch SDK (${wheel.file}, ${total}): first use only`,
        done: 0,
        total: wheel.size,
        tick: false,
      });
      const file = join(work, wheel.file);
      const got = await downloadTo(wheel, file, {
        signal: opts.signal,
        fetch: opts.fetch,
        onBytes: (done, size, tick) =>
          progress({
            phase: 'download',
            message: `downloading the ExecuTorch SDK: ${formatIEC(BigInt(done))} of ${total}`,
            done,
            total: size,
            tick,
          }),
      });
      if (got !== wheel.sha256) throw mismatch(wheel.url, got, wheel);
      bytes = await readFile(file);
    }
    const staged = join(work, 'sdk');
    await unpack(bytes, staged, progress);
    await writeFile(
      join(staged, MARKER),
      `${JSON.stringify({ version: pin.version, wheel: wheel.file, sha256: wheel.sha256, made: new Date().toISOString() }, null, 2)}\n`,
    );
    // A folder appears whole or not at all.
    await rename(staged, dir);
  } finally {
    await rm(work, { recursive: true, force: true });
    untrack();
  }
}

/** The SDK for this machine: the cached one, or downloaded and unpacked now (with progress). */
export async function ensureExecutorchSdk(opts: EnsureSdkOptions = {}): Promise<ExecutorchSdk> {
  const progress = opts.onProgress ?? (() => {});
  const pin = opts.pin ?? readSdkPin();
  const wheel = wheelFor(pin, opts.platform);
  const dir = sdkDir(pin, wheel, opts.cacheDir ?? defaultCacheRoot(settingsOf(opts.env), opts.cwd));
  const ready = () => existsSync(join(dir, MARKER));
  if (ready()) {
    progress({ phase: 'cached', message: `using the ExecuTorch SDK ${dir}` });
    return described(dir, pin, wheel, false);
  }
  await mkdir(dirname(dir), { recursive: true });
  let created = false;
  await withLock(
    `${dir}.lock`,
    async () => {
      if (ready()) return;
      await make(dir, pin, wheel, opts);
      created = true;
    },
    {
      purpose: 'unpacking the ExecuTorch SDK',
      done: ready,
      onWait: (owner) =>
        progress({
          phase: 'waiting',
          message: `waiting for another process that is fetching the ExecuTorch SDK${owner ? ` (pid ${owner.pid})` : ''}`,
        }),
    },
  );
  if (!ready()) throw new TrtxError('SDK_WHEEL_INVALID', dir, 'the ExecuTorch SDK was not unpacked');
  progress({ phase: 'ready', message: `ExecuTorch SDK ${pin.version} ready: ${dir}` });
  return described(dir, pin, wheel, created);
}
