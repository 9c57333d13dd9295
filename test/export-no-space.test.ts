// `trtx export` onto a full disk (issue 43): the bridge meets ENOSPC writing
// the program, the reference file or a library's temporary. That is the
// machine's state, WRITE_NO_SPACE (exit 2) as `trtx rewrite` says it, naming
// OUT; before, it read as BRIDGE_INTERNAL ("a bug") or BRIDGE_WRITE. The
// Python doubles raise the OSError a full disk raises (TRTX_DOUBLE_FAULT
// `STAGE:enospc`); the bridge's error event carries its errno name.
import { describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { adoptTemporary } from '../src/pte/adopt.js';
import { withPte } from '../src/pte/open.js';
import { corpusPath } from './helpers/corpus.js';
import { DOUBLE_PYTHON, doubleEnv, workspace } from './helpers/bridge.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

describe('trtx export onto a full disk', () => {
  it.each([
    ['writing the program', 'write', /writing \S+\.bridge-[0-9a-f]{12}\.pte failed: OSError: \[Errno 28\] No space left on device/],
    ['in a library (Torch-TensorRT\u2019s compile)', 'compile', /OSError: \[Errno 28\] No space left on device/],
  ])('%s: WRITE_NO_SPACE naming OUT, exit 2, nothing left', { timeout: 60_000 }, async (_, stage, detail) => {
    const ws = workspace();
    const out = ws.file('model.pte');
    const r = await runCli(['export', ws.file('model.pt2'), '-o', out, '--python', DOUBLE_PYTHON], {
      env: doubleEnv(ws, { TRTX_DOUBLE_FAULT: `${stage}:enospc` }),
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(`^error: WRITE_NO_SPACE: ${out.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: no space left on the device \\(ENOSPC\\): `, 'm'),
    );
    expect(r.stderr).toMatch(detail);
    expect(r.stderr).toMatch(/^hint: Free space \(or raise the quota\) on the device of the output folder, .*; then run it again\./m);
    expect(r.stderr).not.toMatch(/BRIDGE_|a bug/);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(ws.dir).filter((f) => f.includes('.bridge-'))).toEqual([]);
  });

  it('--json: the error document\u2019s code is WRITE_NO_SPACE', { timeout: 60_000 }, async () => {
    const ws = workspace();
    const r = await runCli(['export', ws.file('model.pt2'), '-o', ws.file('model.pte'), '--python', DOUBLE_PYTHON, '--json'], {
      env: doubleEnv(ws, { TRTX_DOUBLE_FAULT: 'write:enospc' }),
    });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'WRITE_NO_SPACE', location: ws.file('model.pte') } });
  });

  it(
    'a failure that is not the disk\u2019s stays the bridge\u2019s: a RuntimeError in compile is BRIDGE_COMPILE',
    { timeout: 60_000 },
    async () => {
      const ws = workspace();
      const r = await runCli(['export', ws.file('model.pt2'), '-o', join(ws.dir, 'x.pte'), '--python', DOUBLE_PYTHON], {
        env: doubleEnv(ws, { TRTX_DOUBLE_FAULT: 'compile:raise' }),
      });
      expect(r.stderr).toMatch(/^error: BRIDGE_COMPILE: /m);
    },
  );
});

describe('what the system refuses in trtx\u2019s own writes of an export is a coded refusal, not INTERNAL', () => {
  it('removing a stale OUT.reference.json that is a folder: OUTPUT_NOT_REGULAR, exit 2', { timeout: 60_000 }, async () => {
    const ws = workspace();
    const out = ws.file('model.pte');
    mkdirSync(`${out}.reference.json`);
    const r = await runCli(['export', ws.file('model.pt2'), '-o', out, '--python', DOUBLE_PYTHON], { env: doubleEnv(ws) });
    expect(r.code, r.stderr).toBe(2);
    // The doubles' torch runs nothing eagerly: no reference is written, and an earlier one is removed.
    expect(r.stderr).toMatch(/^error: OUTPUT_NOT_REGULAR: \S+model\.pte\.reference\.json: cannot remove it: is a directory$/m);
  });

  it('publishing the bridge\u2019s file where its folder is gone: OUTPUT_DIR', async () => {
    const dir = tempDir('adopt-refusal');
    const temp = join(dir, '.out.pte.bridge-000000000000.pte');
    copyFileSync(corpusPath('add'), temp);
    await withPte(temp, async (pte) => {
      const output = join(dir, 'gone', 'out.pte');
      await expect(adoptTemporary(pte, pte.program, pte.program.segments, { output, changed: false })).rejects.toMatchObject({
        code: 'OUTPUT_DIR',
        location: output,
      });
    });
  });
});
