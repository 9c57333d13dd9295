// The ExecuTorch C++ SDK without the Python environment (src/sdk): the pinned
// wheel is checked against its sha256 before anything is unpacked, only its
// executorch/include, lib and share folders land in the cache, a folder
// appears whole or not at all, and a second call reuses it. Wheels here are
// small stand-ins made with Python's zipfile (the real one is fetched by the
// runner builds of test/runner-build.test.ts).
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureExecutorchSdk, readSdkPin, wheelFor, zipEntries, type SdkPin, type SdkProgress } from '../src/sdk/index.js';
import { readPythonLock } from '../src/pyenv/index.js';
import { tempDir } from './helpers/temp.js';

const work = tempDir('sdk');

const CONFIG = 'executorch/share/cmake/executorch-config.cmake';
const SOUND: Record<string, string> = {
  [CONFIG]: '# config\n',
  'executorch/include/executorch/runtime/core/error.h': '#pragma once\n',
  'executorch/lib/libexecutorch.so': 'ELF',
  'executorch/exir/__init__.py': 'python, not SDK\n',
  'executorch-1.5.1.dist-info/RECORD': 'x\n',
};

/** A wheel (a ZIP) with these entries, deflated; `modes` sets Unix permission bits. */
function wheel(name: string, entries: Record<string, string>, modes: Record<string, number> = {}): { path: string; bytes: Buffer } {
  const path = join(work, name);
  const script = `
import json, sys, zipfile
entries, modes = json.loads(sys.argv[2]), json.loads(sys.argv[3])
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    for n, text in entries.items():
        info = zipfile.ZipInfo(n)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = (0o100000 | modes.get(n, 0o644)) << 16
        z.writestr(info, text)
`;
  execFileSync('python3', ['-c', script, path, JSON.stringify(entries), JSON.stringify(modes)]);
  return { path, bytes: readFileSync(path) };
}

function pinFor(bytes: Buffer, platform = 'test-x'): SdkPin {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return {
    path: 'test',
    version: '1.5.1',
    wheels: { [platform]: { file: 'et.whl', url: 'https://example.invalid/et.whl', sha256, size: bytes.length } },
  };
}

describe('the pin (python-bridge/executorch-sdk.json)', () => {
  it('pins the executorch of requirements.lock, one https wheel with a sha256 per platform, this one included', async () => {
    const pin = readSdkPin();
    const lock = await readPythonLock();
    expect(pin.version).toBe(lock.pins.get('executorch'));
    expect(Object.keys(pin.wheels).sort()).toEqual(['darwin-arm64', 'linux-arm64', 'linux-x64']);
    for (const w of Object.values(pin.wheels)) {
      expect(w.url).toMatch(/^https:\/\/files\.pythonhosted\.org\/.*\.whl$/);
      expect(w.url.endsWith(`/${w.file}`)).toBe(true);
      expect(w.file).toContain(`executorch-${pin.version}-`);
    }
    expect(wheelFor(pin, 'linux-x64').file).toMatch(/manylinux.*x86_64\.whl$/);
  });

  it('names the platforms it has when this one has none', () => {
    expect(() => wheelFor(readSdkPin(), 'plan9-mips')).toThrow(
      expect.objectContaining({ code: 'SDK_PLATFORM_UNSUPPORTED', kind: 'usage' }),
    );
  });
});

describe('reading the wheel', () => {
  it('lists only the entries under the folders asked for, with their bytes and modes', () => {
    const w = wheel('list.whl', SOUND, { 'executorch/lib/libexecutorch.so': 0o755 });
    const got = zipEntries(w.bytes, ['executorch/include/', 'executorch/lib/', 'executorch/share/']);
    expect(got.map((e) => e.name).sort()).toEqual(
      [CONFIG, 'executorch/include/executorch/runtime/core/error.h', 'executorch/lib/libexecutorch.so'].sort(),
    );
    const lib = got.find((e) => e.name.endsWith('.so'))!;
    expect(lib.data().toString()).toBe('ELF');
    expect(lib.mode).toBe(0o755);
  });

  it('refuses a path that leaves its folder, and what is not a ZIP', () => {
    const w = wheel('escape.whl', { ...SOUND, 'executorch/lib/../../../evil': 'x' });
    expect(() => zipEntries(w.bytes, ['executorch/lib/'])).toThrow(expect.objectContaining({ code: 'SDK_WHEEL_INVALID' }));
    expect(() => zipEntries(Buffer.from('not a zip at all, just some text'), ['executorch/'])).toThrow(
      expect.objectContaining({ code: 'SDK_WHEEL_INVALID' }),
    );
  });
});

describe('ensureExecutorchSdk', () => {
  it('unpacks a local copy of the pinned wheel once, then reuses it', async () => {
    const w = wheel('local.whl', SOUND, { 'executorch/lib/libexecutorch.so': 0o755 });
    const cacheDir = join(work, 'cache-local');
    const opts = { cacheDir, pin: pinFor(w.bytes), platform: 'test-x', wheelFile: w.path };
    const events: SdkProgress[] = [];
    const a = await ensureExecutorchSdk({ ...opts, onProgress: (p) => events.push(p) });
    expect(a).toMatchObject({ version: '1.5.1', created: true, wheel: 'et.whl' });
    expect(readdirSync(a.root).sort()).toEqual(['include', 'lib', 'share', 'trtx-sdk.json']);
    expect(existsSync(join(a.root, 'share', 'cmake', 'executorch-config.cmake'))).toBe(true);
    expect(statSync(join(a.lib, 'libexecutorch.so')).mode & 0o111).not.toBe(0);
    expect(events.map((e) => e.phase)).toContain('unpack');
    const b = await ensureExecutorchSdk(opts);
    expect(b).toMatchObject({ root: a.root, created: false });
    // Nothing half-made beside it.
    expect(readdirSync(join(cacheDir, 'executorch-sdk'))).toEqual([a.root.split('/').pop()]);
  });

  it('downloads the pinned URL with progress in bytes', async () => {
    const w = wheel('fetched.whl', SOUND);
    const urls: string[] = [];
    const fetch = (url: string) => {
      urls.push(url);
      return Promise.resolve(new Response(w.bytes));
    };
    const events: SdkProgress[] = [];
    const sdk = await ensureExecutorchSdk({
      cacheDir: join(work, 'cache-fetch'),
      pin: pinFor(w.bytes),
      platform: 'test-x',
      fetch,
      onProgress: (p) => events.push(p),
    });
    expect(urls).toEqual(['https://example.invalid/et.whl']);
    expect(sdk.created).toBe(true);
    const bytes = events.flatMap((e) => (e.phase === 'download' ? [e.done] : []));
    expect(bytes[bytes.length - 1]).toBe(w.bytes.length);
  });

  it('refuses a wheel whose sha256 is not the pinned one, and leaves nothing behind', async () => {
    const w = wheel('other.whl', SOUND);
    const pin = pinFor(Buffer.from('the pinned wheel is another file'));
    const cacheDir = join(work, 'cache-mismatch');
    await expect(ensureExecutorchSdk({ cacheDir, pin, platform: 'test-x', wheelFile: w.path })).rejects.toMatchObject({
      code: 'SDK_HASH_MISMATCH',
      kind: 'usage',
    });
    const fetch = () => Promise.resolve(new Response(w.bytes));
    const downloaded = { ...pin, wheels: { 'test-x': { ...pin.wheels['test-x'], size: w.bytes.length } } };
    await expect(ensureExecutorchSdk({ cacheDir, pin: downloaded, platform: 'test-x', fetch })).rejects.toMatchObject({
      code: 'SDK_HASH_MISMATCH',
    });
    expect(readdirSync(join(cacheDir, 'executorch-sdk'))).toEqual([]);
  });

  it('says why a download failed: the server answer, or a size that is not the pin', async () => {
    const w = wheel('short.whl', SOUND);
    const pin = pinFor(w.bytes);
    const cacheDir = join(work, 'cache-fail');
    const notFound = () => Promise.resolve(new Response('gone', { status: 404, statusText: 'Not Found' }));
    await expect(ensureExecutorchSdk({ cacheDir, pin, platform: 'test-x', fetch: notFound })).rejects.toMatchObject({
      code: 'SDK_DOWNLOAD_FAILED',
      message: expect.stringContaining('404'),
    });
    const short = () => Promise.resolve(new Response(w.bytes.subarray(0, 100)));
    await expect(ensureExecutorchSdk({ cacheDir, pin, platform: 'test-x', fetch: short })).rejects.toMatchObject({
      code: 'SDK_DOWNLOAD_FAILED',
      message: expect.stringContaining('100 bytes'),
    });
    expect(readdirSync(join(cacheDir, 'executorch-sdk'))).toEqual([]);
  });

  it('refuses a wheel that holds no C++ SDK', async () => {
    const w = wheel('no-sdk.whl', { 'executorch/exir/__init__.py': 'x', 'executorch/lib/libexecutorch.so': 'ELF' });
    await expect(
      ensureExecutorchSdk({ cacheDir: join(work, 'cache-nosdk'), pin: pinFor(w.bytes), platform: 'test-x', wheelFile: w.path }),
    ).rejects.toMatchObject({ code: 'SDK_WHEEL_INVALID' });
  });
});
