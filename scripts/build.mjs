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
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { basename, resolve } from 'node:path';
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
  packages: 'external',
  // A linked map costs nothing at start; an inline one is parsed on every run.
  sourcemap: 'linked',
  logLevel: 'warning',
});
if (process.argv.includes('--clean')) {
  const written = new Set(Object.keys(result.metafile.outputs).map((p) => basename(resolve(root, p))));
  for (const name of readdirSync(`${root}dist`)) {
    if (!written.has(name) && name !== '.sources-notice') rmSync(`${root}dist/${name}`, { recursive: true, force: true });
  }
}
