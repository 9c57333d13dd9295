// `trtx fixtures DIR`: the example programs the README's commands use, made
// by the product itself, listed with sizes in binary units.
import { describe, expect, it } from 'vitest';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CATALOGUE } from '../src/examples/catalogue.js';
import { openPte } from '../src/pte/open.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

describe('trtx fixtures DIR', () => {
  it('writes every catalogue program, whole, and lists them with KiB/MiB sizes', async () => {
    const dir = join(tempDir('fixtures-cli'), 'examples');
    const r = await runCli(['fixtures', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(CATALOGUE.map((e) => e.file).sort());
    for (const f of ['kv-decode-staged.pte', 'multi-engine.pte', 'broken-swapped-caches.pte']) await (await openPte(join(dir, f))).close();
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(CATALOGUE.length + 1);
    for (const l of lines.slice(0, -1)) expect(l).toMatch(/^[a-z0-9-]+\.pte +[0-9.]+ (B|KiB|MiB) {2}(sound |broken) {2}./);
    expect(r.stdout).not.toMatch(/\b(kB|MB|GB)\b/);
    expect(lines.at(-1)).toMatch(/^wrote \d+ programs to .*examples \(\d+ sound, \d+ broken\)$/);
  });

  it('--only writes the names that contain the text', async () => {
    const dir = tempDir('fixtures-cli');
    expect((await runCli(['fixtures', dir, '--only', 'multi-engine'])).code).toBe(0);
    expect(readdirSync(dir)).toEqual(['multi-engine.pte']);
    const none = await runCli(['fixtures', dir, '--only', 'no-such-program']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^error: FIXTURES_NONE: /);
  });

  it('refuses a DIR that is a file, exit 2', async () => {
    const file = join(tempDir('fixtures-cli'), 'a-file');
    writeFileSync(file, '');
    const r = await runCli(['fixtures', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: FIXTURES_OUT: /);
  });
});
