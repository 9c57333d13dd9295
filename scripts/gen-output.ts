// What every generator of `npm run gen` does with its outputs: write them,
// or under `--check` (`npm run gen:check`, run by .ci/run) write nothing and
// fail when a committed file differs from what the generator makes.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));

/** Writes (or checks, with --check in argv) each [file, text]; exits 1 when any is stale. */
export function writeOrCheck(outputs: ReadonlyArray<readonly [file: string, text: string]>): void {
  const check = process.argv.includes('--check');
  let stale = false;
  for (const [file, fresh] of outputs) {
    const name = relative(REPO, file);
    if (!check) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, fresh);
      console.log(`gen: wrote ${name}`);
      continue;
    }
    let committed = '';
    try {
      committed = readFileSync(file, 'utf8');
    } catch {
      // missing: stale
    }
    if (committed === fresh) console.log(`gen: ${name} is up to date`);
    else {
      console.error(`gen: ${name} is stale; run \`npm run gen\` and commit it`);
      stale = true;
    }
  }
  if (stale) process.exit(1);
}
