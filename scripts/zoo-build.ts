// trtx's model zoo (python-bridge/zoo/): tiny Hugging Face transformers models
// exported as their authors document, saved with torch.export.save, for the
// conformance suite (test/real-zoo-*.test.ts, bench/zoo.ts, scripts/zoo-table.ts).
// Mirrors scripts/corpus/build.ts: built once into the cache, in a folder named by
// the managed lock's hash, the zoo lock's hash and the zoo sources' hash, under
// a lock, and reused after. transformers never enters trtx's managed
// environment: requirements-zoo.lock is installed with pip --no-deps
// --require-hashes --target into a package folder of its own, which is on
// PYTHONPATH only while the zoo is built. The archives are then loaded and run
// by that environment alone (`python -m zoo.lean`): trtx export reads them
// without transformers. Fails loudly, never skips.

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { bridgeEnv, bridgePackageDir } from '../src/bridge/env.js';
import { ensureManagedEnv, type ManagedEnv, type PythonEnvProgress } from '../src/pyenv/managed.js';
import { pipProgress } from '../src/pyenv/pip-progress.js';
import { defaultCacheRoot } from '../src/util/cache-dir.js';
import { trackPath } from '../src/util/cleanup.js';
import { lastLines } from '../src/util/last-lines.js';
import { withLock } from '../src/util/lock.js';
import { execaTracked } from '../src/util/tracked-child.js';

const Tensor = z.strictObject({ dtype: z.string(), shape: z.array(z.number().int().min(0)) });
export const ZooModel = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9-]*$/),
  description: z.string(),
  architecture: z.string(),
  model_type: z.string(),
  transformers: z.string(),
  params: z.number().int(),
  seconds: z.number(),
  file: z.string(),
  bytes: z.number().int(),
  methods: z.record(z.string(), z.strictObject({ inputs: z.array(Tensor.extend({ name: z.string() })), outputs: z.array(Tensor) })),
  cache: z.strictObject({ buffers: z.number().int(), max_cache_len: z.number().int() }),
});
export type ZooModel = z.infer<typeof ZooModel>;
export const ZooManifest = z.strictObject({
  schema: z.literal('trtx.zoo/1'),
  models: z.array(ZooModel).min(1),
  versions: z.strictObject({ python: z.string(), torch: z.string(), transformers: z.string() }),
  seconds: z.number(),
});
export type ZooManifest = z.infer<typeof ZooManifest>;
/** What `python -m zoo.lean` printed, per model: the archive loaded and ran without transformers. */
const LeanRow = z.object({ name: z.string(), ok: z.boolean(), error: z.string().optional(), seconds: z.number() });
export type LeanRow = z.infer<typeof LeanRow>;

export interface Zoo {
  dir: string;
  manifest: ZooManifest;
  lean: LeanRow[];
  /** The managed environment's interpreter (without the zoo's packages). */
  python: string;
  built: boolean;
  /** Seconds this call spent installing the packages and building (0 when reused). */
  seconds: { packages: number; build: number };
}

export interface EnsureZooOptions {
  cacheDir?: string;
  onProgress?: (message: string) => void;
  onPythonEnv?: (p: PythonEnvProgress) => void;
  signal?: AbortSignal;
}

const MANIFEST = 'manifest.json';
const LEAN = 'lean.json';
const ZOO_LOCK = 'requirements-zoo.lock';
const MARKER = 'trtx-zoo-packages.json';

const hash = (bytes: Buffer | string, n: number) => createHash('sha256').update(bytes).digest('hex').slice(0, n);

/** sha256 of requirements-zoo.lock, first 16 hex digits (as the managed lock's). */
export async function zooLockHash(): Promise<string> {
  return hash(await readFile(join(bridgePackageDir(), ZOO_LOCK)), 16);
}

/** sha256 over python-bridge/zoo/*.py and bench_models/*.py (the zoo's Llama-3.2 shapes; names and bytes), first 12 hex digits. */
export async function zooSourceHash(): Promise<string> {
  const h = createHash('sha256');
  for (const folder of ['zoo', 'bench_models']) {
    const dir = join(bridgePackageDir(), folder);
    for (const f of (await readdir(dir)).filter((x) => x.endsWith('.py')).sort()) {
      h.update(`${folder}/${f}\0`);
      h.update(await readFile(join(dir, f)));
    }
  }
  return h.digest('hex').slice(0, 12);
}

function fail(message: string, output = ''): never {
  const tail = output ? `\n${lastLines(output, 15).join('\n')}` : '';
  throw new Error(`zoo: ${message}${tail}`);
}

/** The folder requirements-zoo.lock is installed into (pip --target), made once per zoo lock and managed environment. */
async function ensurePackages(env: ManagedEnv, root: string, zooLock: string, opts: EnsureZooOptions): Promise<string> {
  const dir = join(root, 'zoo', `packages-${zooLock}-${env.lock.hash}`);
  if (existsSync(join(dir, MARKER))) return dir;
  await mkdir(join(root, 'zoo'), { recursive: true });
  const say = opts.onProgress ?? (() => {});
  await withLock(
    `${dir}.lock`,
    async () => {
      if (existsSync(join(dir, MARKER))) return;
      await rm(dir, { recursive: true, force: true });
      const untrack = trackPath(dir);
      try {
        say(`installing ${ZOO_LOCK} (transformers and what it needs beyond trtx's environment) into ${dir}`);
        // --no-deps: the lock lists every package; pip must not resolve, or it could reach for another torch.
        const args = ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off'];
        args.push('--no-deps', '--require-hashes', '--target', dir, '-r', join(bridgePackageDir(), ZOO_LOCK));
        const pip = execaTracked(env.python, args, { all: true, reject: false, cancelSignal: opts.signal });
        const report = pipProgress((m) => say(`zoo packages: ${m}`));
        pip.all?.on('data', (chunk: Buffer) => report(chunk.toString('utf8')));
        const r = await pip;
        if (r.exitCode !== 0) fail(`pip could not install ${ZOO_LOCK} (exit ${r.exitCode})`, String(r.all ?? ''));
        await writeFile(join(dir, MARKER), JSON.stringify({ lock: zooLock, python: env.python }) + '\n');
        untrack();
      } catch (e) {
        untrack();
        await rm(dir, { recursive: true, force: true });
        throw e;
      }
    },
    { purpose: 'installing the zoo packages', done: () => existsSync(join(dir, MARKER)) },
  );
  return dir;
}

/** Runs `python -m zoo.MODULE ARGS` in python-bridge, with `extraPath` (the zoo packages) on PYTHONPATH or nothing beyond the bridge. */
function runZooModule(python: string, module: string, args: string[], extraPath: string | null, opts: EnsureZooOptions) {
  return execaTracked(python, ['-m', `zoo.${module}`, ...args], {
    cwd: bridgePackageDir(),
    env: bridgeEnv({ base: process.env, extra: extraPath ? { PYTHONPATH: extraPath } : {} }),
    extendEnv: false,
    reject: false,
    all: true,
    cancelSignal: opts.signal,
  });
}

function jsonLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a library's line: not ours
    }
  }
  return out;
}

async function build(python: string, packages: string, out: string, opts: EnsureZooOptions): Promise<LeanRow[]> {
  const say = opts.onProgress ?? (() => {});
  const proc = runZooModule(python, 'build', [out], packages, opts);
  proc.stdout?.on('data', (chunk: Buffer) => {
    for (const e of jsonLines(chunk.toString('utf8')))
      if (typeof e.progress === 'string') say(`zoo ${Number(e.index) + 1}/${String(e.total)}: ${e.progress}`);
  });
  const r = await proc;
  if (r.exitCode !== 0) fail(`python -m zoo.build failed (exit ${r.exitCode})`, String(r.all ?? ''));
  say('zoo: loading every archive in trtx\u2019s environment without transformers (python -m zoo.lean)');
  const lean = await runZooModule(python, 'lean', [out], null, opts);
  const rows = jsonLines(String(lean.stdout)).map((x) => LeanRow.parse(x));
  const bad = rows.filter((x) => !x.ok);
  if (lean.exitCode !== 0 || bad.length > 0)
    fail(
      `archives that do not load without transformers: ${bad.map((x) => `${x.name} (${x.error})`).join('; ') || '?'}`,
      String(lean.all ?? ''),
    );
  await writeFile(join(out, LEAN), JSON.stringify(rows, null, 2) + '\n');
  return rows;
}

async function readZoo(dir: string): Promise<{ manifest: ZooManifest; lean: LeanRow[] } | null> {
  try {
    const manifest = ZooManifest.parse(JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')));
    const lean = z.array(LeanRow).parse(JSON.parse(await readFile(join(dir, LEAN), 'utf8')));
    return { manifest, lean };
  } catch {
    return null;
  }
}

/**
 * Removes, for this managed lock, zoos built from other sources or another zoo
 * lock and package folders of another zoo lock; one of another managed lock is
 * another checkout's, and one being made holds its lock: both left alone.
 */
async function pruneOlder(parent: string, envLock: string, zooLock: string, keep: string): Promise<void> {
  const zoo = new RegExp(`^zoo-${envLock}-[0-9a-f]+-[0-9a-f]+$`);
  const packages = new RegExp(`^packages-(?!${zooLock}-)[0-9a-f]+-${envLock}$`);
  for (const name of await readdir(parent)) {
    const path = join(parent, name);
    if (path === keep || !(zoo.test(name) || packages.test(name)) || existsSync(`${path}.lock`)) continue;
    await rm(path, { recursive: true, force: true });
  }
}

/** The zoo, built on first use and reused after. */
export async function ensureZoo(opts: EnsureZooOptions = {}): Promise<Zoo> {
  const root = opts.cacheDir ?? defaultCacheRoot(process.env);
  const env = await ensureManagedEnv({ env: process.env, cacheDir: opts.cacheDir, onProgress: opts.onPythonEnv, signal: opts.signal });
  const zooLock = await zooLockHash();
  const dir = join(root, 'zoo', `zoo-${env.lock.hash}-${zooLock}-${await zooSourceHash()}`);
  const ready = await readZoo(dir);
  if (ready) return { dir, ...ready, python: env.python, built: false, seconds: { packages: 0, build: 0 } };
  const t0 = Date.now();
  const packages = await ensurePackages(env, root, zooLock, opts);
  const t1 = Date.now();
  let built = false;
  await withLock(
    `${dir}.lock`,
    async () => {
      if (await readZoo(dir)) return;
      opts.onProgress?.(`building the model zoo into ${dir} (once per lock and zoo source)`);
      const tmp = `${dir}.tmp-${process.pid}`;
      await rm(tmp, { recursive: true, force: true });
      const untrack = trackPath(tmp);
      try {
        await build(env.python, packages, tmp, opts);
        await rm(dir, { recursive: true, force: true });
        await rename(tmp, dir);
        built = true;
        await pruneOlder(join(root, 'zoo'), env.lock.hash, zooLock, dir);
      } finally {
        await rm(tmp, { recursive: true, force: true });
        untrack();
      }
    },
    { purpose: 'building the model zoo', done: () => existsSync(join(dir, LEAN)) },
  );
  const zoo = await readZoo(dir);
  if (!zoo) fail(`the zoo at ${dir} was not completed`);
  const seconds = { packages: (t1 - t0) / 1000, build: (Date.now() - t1) / 1000 };
  return { dir, ...zoo, python: env.python, built, seconds };
}
