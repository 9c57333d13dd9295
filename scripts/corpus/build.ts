// trtx's real-program corpus: small models defined in python-bridge/corpus/,
// exported by ExecuTorch itself (torch.export -> to_edge_transform_and_lower
// with the reference lowering -> to_executorch) in trtx's managed Python
// environment. Built once into the cache folder, named by the lock file's hash
// and the hash of the sources that make it (the models and the reference
// lowering), reused after; made under a lock, because test files and commands
// ask for it at the same time. Never committed. Nothing here prints: progress
// goes to onProgress.

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { bridgeEnv, bridgePackageDir } from '../../src/bridge/env.js';
import { ensureManagedEnv, type PythonEnvProgress } from '../../src/pyenv/managed.js';
import { defaultCacheRoot } from '../../src/util/cache-dir.js';
import { lastLines } from '../../src/util/last-lines.js';
import { TrtxError } from '../../src/util/errors.js';
import { trackPath } from '../../src/util/cleanup.js';
import { withLock } from '../../src/util/lock.js';
import { execaTracked } from '../../src/util/tracked-child.js';
import { CorpusManifest } from './manifest.js';

export interface RealCorpus {
  dir: string;
  manifest: CorpusManifest;
  /** The managed environment's interpreter that built it (and runs ExecuTorch's runtime on it). */
  python: string;
  /** True when this call built it. */
  built: boolean;
}

export interface EnsureCorpusOptions {
  cacheDir?: string;
  onProgress?: (message: string) => void;
  onPythonEnv?: (p: PythonEnvProgress) => void;
  signal?: AbortSignal;
}

const MANIFEST = 'manifest.json';
/** The folders whose Python makes the corpus: a change there makes a new one (run.py and demo_model.py only use it). */
const SOURCE_DIRS = ['corpus', join('trtx_bridge', 'standin_lowering')];
const NOT_SOURCES = new Set(['corpus/run.py', 'corpus/demo_model.py']);

/** sha256 over the corpus's Python sources (names and bytes), first 12 hex digits. */
export async function corpusSourceHash(): Promise<string> {
  const root = bridgePackageDir();
  const h = createHash('sha256');
  for (const sub of SOURCE_DIRS) {
    const files = (await readdir(join(root, sub))).filter((f) => f.endsWith('.py') && !NOT_SOURCES.has(`${sub}/${f}`)).sort();
    for (const f of files) {
      h.update(`${sub}/${f}\0`);
      h.update(await readFile(join(root, sub, f)));
    }
  }
  return h.digest('hex').slice(0, 12);
}

async function readManifest(dir: string): Promise<CorpusManifest | null> {
  try {
    const parsed = CorpusManifest.safeParse(JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

async function build(python: string, out: string, opts: EnsureCorpusOptions): Promise<void> {
  const progress = opts.onProgress ?? (() => {});
  const proc = execaTracked(python, ['-m', 'corpus.build', out], {
    cwd: bridgePackageDir(),
    env: bridgeEnv({ base: process.env }),
    extendEnv: false,
    reject: false,
    all: true,
    cancelSignal: opts.signal,
  });
  let pending = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      try {
        const event = JSON.parse(line) as { progress?: string; index?: number; total?: number };
        if (event.progress) progress(`corpus ${event.index !== undefined ? `${event.index + 1}/${event.total}` : ''}: ${event.progress}`);
      } catch {
        // a library printing on stdout: not progress
      }
    }
  });
  const r = await proc;
  if (r.exitCode !== 0) {
    const tail = lastLines(String(r.all ?? ''), 12).join('\n');
    throw new TrtxError(
      'CORPUS_BUILD_FAILED',
      join(bridgePackageDir(), 'corpus'),
      `ExecuTorch could not build the corpus (exit ${r.exitCode}):\n${tail}`,
      {
        hint: 'the models in python-bridge/corpus/ or the reference lowering broke; run `npm run corpus` to see the whole log',
      },
    );
  }
}

/**
 * Removes corpora of this lock built from other (older) sources: one per
 * source hash would pile up while the models change. A corpus of another lock
 * is another checkout's (two trtx versions may share the cache folder): left
 * alone, or each would rebuild the other's on every run.
 */
export async function pruneOlder(parent: string, lockHash: string, keep: string): Promise<void> {
  const sameLock = new RegExp(`^corpus-${lockHash}-[0-9a-f]+$`);
  for (const name of await readdir(parent)) {
    const path = join(parent, name);
    if (path === keep || !sameLock.test(name)) continue;
    // A corpus another process is building right now holds its lock: leave it.
    if (existsSync(`${path}.lock`)) continue;
    await rm(path, { recursive: true, force: true });
  }
}

/** The corpus, built on first use and reused after. */
export async function ensureRealCorpus(opts: EnsureCorpusOptions = {}): Promise<RealCorpus> {
  const root = opts.cacheDir ?? defaultCacheRoot(process.env);
  const env = await ensureManagedEnv({ env: process.env, cacheDir: opts.cacheDir, onProgress: opts.onPythonEnv, signal: opts.signal });
  const dir = join(root, 'corpus', `corpus-${env.lock.hash}-${await corpusSourceHash()}`);
  const ready = await readManifest(dir);
  if (ready) return { dir, manifest: ready, python: env.python, built: false };
  await mkdir(join(root, 'corpus'), { recursive: true });
  let built = false;
  await withLock(
    `${dir}.lock`,
    async () => {
      if (await readManifest(dir)) return;
      opts.onProgress?.(
        `building the real-program corpus with ExecuTorch ${env.probe.packages.executorch} into ${dir} (once per lock and corpus source; a few minutes on 2 cores)`,
      );
      const tmp = `${dir}.tmp-${process.pid}`;
      await rm(tmp, { recursive: true, force: true });
      const untrack = trackPath(tmp);
      try {
        await build(env.python, tmp, opts);
        if (!(await readManifest(tmp))) throw new TrtxError('CORPUS_BUILD_FAILED', tmp, 'the build wrote no valid manifest.json');
        await rm(dir, { recursive: true, force: true });
        await rename(tmp, dir);
        built = true;
        await pruneOlder(join(root, 'corpus'), env.lock.hash, dir);
      } finally {
        await rm(tmp, { recursive: true, force: true });
        untrack();
      }
    },
    {
      purpose: 'building the real-program corpus',
      done: () => existsSync(join(dir, MANIFEST)),
      onWait: (owner) => opts.onProgress?.(`waiting for another process that is building the corpus${owner ? ` (pid ${owner.pid})` : ''}`),
    },
  );
  const manifest = await readManifest(dir);
  if (!manifest) throw new TrtxError('CORPUS_BUILD_FAILED', dir, 'the corpus was not completed');
  return { dir, manifest, python: env.python, built };
}
