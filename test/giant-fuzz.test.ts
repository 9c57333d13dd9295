// The standing campaign over the real-size hostile shapes (issue 43 items 3
// and 6; test/helpers/giant-shapes.ts): each shape through `check --json`
// and `inspect --json` in a child whose V8 heap is capped. Every command
// must end in exit 0, 1 or 2 with a code, never INTERNAL or a V8 abort, under
// 300 MiB of peak RSS. TRTX_GIANT_SEED (default 43) and TRTX_GIANT_SHAPES
// (default 8: each kind twice) widen or replay it.
import { describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { giantShape } from './helpers/giant-shapes.js';
import { runChild } from './helpers/child-cli.js';
import { tempDir } from './helpers/temp.js';

const SEED = Number(process.env.TRTX_GIANT_SEED ?? 43);
const SHAPES = Number(process.env.TRTX_GIANT_SHAPES ?? 8);
const RSS_MIB = 300;

describe('real-size hostile shapes', () => {
  it(`${SHAPES} shapes (seed ${SEED}): a coded answer under ${RSS_MIB} MiB`, { timeout: 60_000 + SHAPES * 60_000 }, async () => {
    const dir = tempDir('giant-fuzz');
    const findings: string[] = [];
    for (let i = 0; i < SHAPES; i++) {
      const shape = giantShape(SEED, i, dir);
      for (const args of [
        ['check', '--json', shape.file],
        ['inspect', '--json', shape.file],
      ]) {
        const r = await runChild(args, { heapMiB: 192, timeoutMs: 55_000 });
        const problem = /INTERNAL|heap out of memory/.test(r.stderr)
          ? r.stderr.slice(-300)
          : ![0, 1, 2].includes(r.code)
            ? `exit ${r.code}: ${r.stderr.slice(-300)}`
            : r.code !== 0 && !/"code": "[A-Z0-9_]+"|^error: [A-Z0-9_]+/m.test(r.stdout + r.stderr)
              ? 'a refusal without a code'
              : !(r.maxRssMiB < RSS_MIB)
                ? `peak RSS ${r.maxRssMiB.toFixed(0)} MiB`
                : null;
        if (problem)
          findings.push(`shape ${i} (${shape.kind}: ${shape.params}; replay giantShape(${SEED}, ${i}, dir)): ${args[0]}: ${problem}`);
      }
      rmSync(shape.file, { force: true });
    }
    expect(findings).toEqual([]);
  });
});
