#!/usr/bin/env node
// Bundles the CLI into dist/trtx.mjs (plus lazily loaded chunks) with esbuild (it comes with tsx), so a
// command starts in tens of milliseconds instead of paying for on-the-fly
// TypeScript. bin/trtx uses the bundle only while it is newer than every
// source file and falls back to tsx otherwise, so a stale bundle never runs.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
await build({
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
