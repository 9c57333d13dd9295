#!/usr/bin/env node
// Generates the FlatBuffers readers/builders for every schema in schemas/:
// TypeScript into src/generated/, C++ into native-runner/generated/.
// The output is committed; `--check` regenerates into a temporary folder and
// fails when the committed code differs (CI runs it), so a schema edit can
// never ship with stale readers.
//
// It also writes the wire layout of the schemas trtx verifies before reading
// (src/generated/layout/, read from flatc's binary schemas by
// flatbuffer-layout.mjs): the tables src/pte/verify.ts checks a .pte program
// and a reference engine against.
//
// The generator is Debian's flatc 2.0.8; the TypeScript runtime is pinned to
// the npm `flatbuffers` 2.0.7 (the newest 2.0.x published, same wire and API
// as the 2.0.8 generator). The corpus conformance tests prove the pairing.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, readdirSync, readFileSync, statSync, mkdirSync, cpSync, existsSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { layoutOf, renderLayout } from './flatbuffer-layout.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const EXPECTED_FLATC = '2.0.8';
const schemas = ['scalar_type.fbs', 'program.fbs', 'reference_engine.fbs'];
// The native runner reads programs through the ExecuTorch runtime; it needs
// only the reference engine's reader.
const targets = [
  { lang: '--ts', dir: 'src/generated', schemas },
  { lang: '--cpp', dir: 'native-runner/generated', schemas: ['reference_engine.fbs'] },
];
// Verifier layouts, inside the TypeScript target's folder (so --check covers them).
const layouts = [
  { schema: 'program.fbs', file: 'program.ts', name: 'PROGRAM_LAYOUT' },
  { schema: 'reference_engine.fbs', file: 'reference-engine.ts', name: 'REFERENCE_ENGINE_LAYOUT' },
];

function flatcVersion() {
  try {
    return execFileSync('flatc', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    console.error("gen: flatc not found; install Debian's flatbuffers-compiler (apt-get install flatbuffers-compiler)");
    process.exit(2);
  }
}

function generate(outRoot) {
  for (const { lang, dir, schemas: own } of targets) {
    const out = join(outRoot, dir);
    mkdirSync(out, { recursive: true });
    for (const schema of own) {
      const args = [lang, '-o', out, join(root, 'schemas', schema)];
      if (lang === '--cpp') args.splice(1, 0, '--scoped-enums');
      execFileSync('flatc', args, { stdio: 'inherit' });
    }
    // flatc 2.0.8 writes a `<schema>_generated.ts` barrel whose imports point
    // one folder too high; nothing uses it, so it is not kept.
    for (const f of readdirSync(out)) if (f.endsWith('_generated.ts')) rmSync(join(out, f));
  }
  const layoutDir = join(outRoot, 'src/generated/layout');
  const bfbs = join(outRoot, 'bfbs');
  mkdirSync(layoutDir, { recursive: true });
  mkdirSync(bfbs, { recursive: true });
  for (const { schema, file, name } of layouts) {
    writeFileSync(join(layoutDir, file), renderLayout(layoutOf(join(root, 'schemas', schema), bfbs), name, schema));
  }
}

function listFiles(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  const walk = (d) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

function listDirs(dir) {
  return [dir, ...readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? listDirs(join(dir, f)) : []))];
}

const version = flatcVersion();
if (!version.endsWith(EXPECTED_FLATC)) {
  console.error(`gen: expected flatc ${EXPECTED_FLATC}, found "${version}"`);
  process.exit(2);
}

const tmp = mkdtempSync(join(tmpdir(), 'trtx-gen-'));
try {
  generate(tmp);
  if (process.argv.includes('--check')) {
    const stale = [];
    for (const { dir } of targets) {
      const fresh = listFiles(join(tmp, dir));
      const committed = listFiles(join(root, dir));
      for (const f of new Set([...fresh, ...committed])) {
        const a = join(tmp, dir, f);
        const b = join(root, dir, f);
        if (!existsSync(a) || !existsSync(b) || !readFileSync(a).equals(readFileSync(b))) stale.push(join(dir, f));
      }
    }
    if (stale.length) {
      console.error(`gen: generated code is stale; run \`npm run gen\` and commit:\n  ${stale.join('\n  ')}`);
      // Not process.exit: the finally below must still remove the temp folder.
      process.exitCode = 1;
    } else {
      console.log('gen: generated code is up to date');
    }
  } else {
    for (const { dir } of targets) {
      rmSync(join(root, dir), { recursive: true, force: true });
      cpSync(join(tmp, dir), join(root, dir), { recursive: true });
      // flatc makes its namespace folders 0750; a checkout's are 0755, and other users run the sources.
      for (const d of listDirs(join(root, dir))) chmodSync(d, 0o755);
    }
    console.log(`gen: wrote ${targets.map((t) => t.dir).join(', ')} with ${version}`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
