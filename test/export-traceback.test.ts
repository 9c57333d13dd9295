// A failed export's hint tells the truth about the Python traceback: the
// bridge writes the traceback of a library failure to a file in trtx's cache
// and the hint names that file; a refusal with no traceback names none, and
// a later successful export of the same model leaves none.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/catalogue.js';
import { runCli } from './helpers/cli.js';
import { DOUBLE_PYTHON, workspace } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';

const cache = tempDir('export-traceback-cache');

async function setup() {
  const ws = workspace();
  const program = ws.file('double-exports-this.pte');
  await writeFixture(program, kvDecoder());
  return { ws, env: { TRTX_PYTHON: DOUBLE_PYTHON, TRTX_DOUBLE_PROGRAM: program, TRTX_CACHE_DIR: cache } };
}

describe('export: the traceback the hint names is there', () => {
  it(
    'a lowering failure names the traceback file, which holds the library exception; a later success removes it',
    { timeout: 60_000 },
    async () => {
      const { ws, env } = await setup();
      const out = ws.file('out.pte');
      const r = await runCli(['export', ws.file('model.pt2'), '-o', out], { env: { ...env, TRTX_DOUBLE_FAULT: 'lower:raise' } });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^error: BRIDGE_LOWER: /m);
      expect(r.stderr).not.toMatch(/stderr has the traceback/);
      const named = /The Python traceback is in (\S+)\.$/m.exec(r.stderr)?.[1];
      expect(named, r.stderr).toBeDefined();
      expect(named!.startsWith(join(cache, 'tracebacks'))).toBe(true);
      const text = readFileSync(named!, 'utf8');
      expect(text).toMatch(/^Traceback \(most recent call last\):/);
      expect(text).toContain('RuntimeError: double: injected failure in lower');
      expect(existsSync(out)).toBe(false);

      const ok = await runCli(['export', ws.file('model.pt2'), '-o', out, '--no-reference'], { env });
      expect(ok.code, ok.stderr).toBe(0);
      expect(existsSync(named!)).toBe(false);
    },
  );

  it('a refusal with no library failure behind it names no traceback', { timeout: 60_000 }, async () => {
    const { ws, env } = await setup();
    const r = await runCli(['export', ws.file('model.pt2'), '-o', ws.file('o.pte')], {
      env: { ...env, TRTX_DOUBLE_MISSING: 'torch_tensorrt' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: BRIDGE_IMPORT_MISSING: /m);
    expect(r.stderr).not.toMatch(/traceback/i);
    expect(readdirSync(join(cache, 'tracebacks')).filter((f) => f.includes('model.pt2'))).toEqual([]);
  });
});
