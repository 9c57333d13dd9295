// Debian's flatc as an independent decoder: what trtx writes must decode with
// the reference compiler against schemas/program.fbs.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './temp.js';

const SCHEMA = resolve(fileURLToPath(new URL('../../schemas/program.fbs', import.meta.url)));

/** flatc --json --strict-json --defaults-json --raw-binary of program bytes. */
export function flatcDecode(programBytes: Uint8Array, schema = SCHEMA): unknown {
  const dir = tempDir('flatc');
  const bin = join(dir, 'program.bin');
  writeFileSync(bin, programBytes);
  execFileSync('flatc', ['--json', '--strict-json', '--defaults-json', '--raw-binary', '-o', dir, schema, '--', bin], { stdio: 'pipe' });
  return JSON.parse(readFileSync(join(dir, 'program.json'), 'utf8'));
}
