#!/usr/bin/env node
// Bundles the CLI into dist/trtx.mjs (plus lazily loaded chunks) with esbuild (it comes with tsx), so a
// command starts in tens of milliseconds instead of paying for on-the-fly
// TypeScript. bin/trtx uses the bundle only while it is newer than every
// source file and falls back to tsx otherwise, so a stale bundle never runs.
//
//
// --clean (npm's prepack, before `npm pack` makes the tarball) then removes
// what earlier builds left in dist/: esbuild names chunks by content hash and
// never removes old ones, which a package must not carry. Only files this
// build did not write go, so a command running this same build keeps every
// chunk it may still load.
//
// Each file is written beside its place and renamed over it, the bundle's
// entry (dist/trtx.mjs) last: a command starting while the bundle is rebuilt
// (`npm i -g .` runs prepare in the checkout) reads either the old files or
// the new ones, never a half-written chunk. esbuild's own writer truncates
// and rewrites in place; a test's `trtx check` once read such a chunk and
// failed with "does not provide an export named ..." (CI, stop 33).
import { build } from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const result = await build({
  metafile: true,
  entryPoints: [`${root}src/cli/main.ts`],
  outdir: `${root}dist`,
  outExtension: { '.js': '.mjs' },
  entryNames: 'trtx',
  // Commands load their heavy dependencies (zod, execa) with dynamic imports;
  // splitting keeps those in chunks so `inspect` never pays for them.
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // The runtime dependencies (commander, execa, zod, flatbuffers) go into the
  // bundle: resolving and reading execa's ~100 files from node_modules was
  // a third of a command's start (bench/first-run.ts). tsx stays outside (bin/trtx loads
  // it only to run the sources), and so does pino, which context.ts requires on
  // the first log line. Their CommonJS parts (commander) call require(), which
  // an ES module lacks: the banner gives the bundle one.
  external: ['tsx', 'tsx/*', 'esbuild', 'pino'],
  banner: {
    js: "import { createRequire as __trtxCreateRequire } from 'node:module'; const require = __trtxCreateRequire(import.meta.url);",
  },
  // A linked map costs nothing at start; an inline one is parsed on every run.
  sourcemap: 'linked',
  logLevel: 'warning',
  write: false,
});
const entry = resolve(root, 'dist', 'trtx.mjs');
const same = (path, bytes) => {
  try {
    return Buffer.compare(readFileSync(path), bytes) === 0;
  } catch {
    return false;
  }
};
// The entry last, and always (its time tells bin/trtx the bundle is newer than src/); a chunk whose bytes are already there is left as it is.
const outputs = [...result.outputFiles].sort((a, b) => Number(a.path === entry) - Number(b.path === entry));
for (const f of outputs) {
  if (f.path !== entry && same(f.path, f.contents)) continue;
  mkdirSync(dirname(f.path), { recursive: true });
  const tmp = `${f.path}.${process.pid}.tmp`;
  writeFileSync(tmp, f.contents);
  renameSync(tmp, f.path);
}
if (process.argv.includes('--clean')) {
  const written = new Set(Object.keys(result.metafile.outputs).map((p) => basename(resolve(root, p))));
  for (const name of readdirSync(`${root}dist`)) {
    if (!written.has(name) && name !== '.sources-notice') rmSync(`${root}dist/${name}`, { recursive: true, force: true });
  }
}
