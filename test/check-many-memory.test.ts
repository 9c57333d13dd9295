// `trtx check FILE...` holds one program at a time (issue 27 item 5): each
// file's decoded program is dropped once it is printed, so memory is flat in
// the number of files. 300 checks of a program of 5,000 planned tensors run
// under a 100 MiB V8 heap; when every decoded program was kept to the end,
// the heap ran out at about a hundred files (exit 134, V8's abort).
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { runChild } from './helpers/child-cli.js';
import { rewrite } from './helpers/diff-files.js';
import { tempDir } from './helpers/temp.js';

const FILES = 300;
let file: string;
beforeAll(async () => {
  const dir = tempDir('check-many');
  const base = join(dir, 'base.pte');
  await writeFixture(base, catalogueEntry('trt-single.pte').build());
  file = await rewrite(base, join(dir, 'planned.pte'), (p) => {
    const plan = p.executionPlan[0];
    const planned = plan.values.find((v) => v.type === 'Tensor' && v.tensor.allocationInfo);
    if (!planned) throw new Error('no planned tensor');
    for (let i = 0; i < 5000; i++) plan.values.push(structuredClone(planned));
  });
}, 60_000);

describe('check over many files', () => {
  it(`checks ${FILES} files under a 100 MiB heap, one program at a time`, { timeout: 300_000 }, async () => {
    // The same path many times: each argument is opened and decoded anew.
    const r = await runChild(['check', ...new Array<string>(FILES).fill(file)], { heapMiB: 100, timeoutMs: 290_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(r.stdout).toContain(`${FILES} files: ${FILES} passed, 0 failed`);
  });
});
