// The one rewrite pipeline (src/pipeline/) that rewrite, export, demo and
// verify's twin run: passes in one order, the structural gate before any
// pass, the check before any write, and the target claimed before the input
// is read.
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { parseRuntimes } from '../src/checks/runtime-rules.js';
import { buildProgram, writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { planPasses } from '../src/pipeline/request.js';
import { runPipeline } from '../src/pipeline/run.js';
import { withPte } from '../src/pte/open.js';
import { writePte } from '../src/pte/write.js';
import { verifyProgram } from '../src/verify/verify.js';
import { tempDir } from './helpers/temp.js';

const GiB = 1n << 30n;
const stagedKv = () => kvDecoder({ mode: 'staged' });

async function staged(dir: string, name = 'staged.pte'): Promise<string> {
  const path = join(dir, name);
  await writeFixture(path, stagedKv());
  return path;
}

describe('the rewrite pipeline', () => {
  it('plans the budget before zero-copy KV whatever the request says first, and runs them in that order', async () => {
    expect(planPasses({ zeroCopyKv: {}, budget: { budget: GiB } }).map((p) => p.name)).toEqual(['budget', 'zero-copy-kv']);
    expect(planPasses({}).map((p) => p.name)).toEqual([]);
    const dir = tempDir('pipeline');
    const out = join(dir, 'zc.pte');
    const outcome = await runPipeline(await staged(dir), {
      request: { zeroCopyKv: {}, budget: { budget: 8n * GiB } },
      output: { path: out, command: 'test' },
    });
    expect(outcome.refused).toBe(false);
    expect(outcome.reports.map((r) => r.pass)).toEqual(['budget', 'zero-copy-kv']);
    // On a delegate without either spec the order appends them as Torch-TensorRT's partitioner writes them.
    await withPte(out, (pte) => {
      const decode = pte.program.executionPlan.find((p) => p.name === 'decode')!;
      expect(decode.delegates[0].compileSpecs.map((s) => s.key)).toEqual(['target_device', 'weight_streaming_budget', 'zero_copy_kv']);
    });
  });

  it('writes nothing when the result fails its check (the demo wrote first and refused after)', async () => {
    const dir = tempDir('pipeline');
    const input = await staged(dir);
    const out = join(dir, 'refused.pte');
    // The zero-copy result needs the zero-copy Torch-TensorRT runtime: an error under stock-trt.
    const outcome = await runPipeline(input, {
      request: { budget: { budget: 8n * GiB }, zeroCopyKv: {} },
      runtime: parseRuntimes(['stock-trt']),
      output: { path: out, command: 'test' },
    });
    expect(outcome.refused).toBe(true);
    expect([...new Set(outcome.checked.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code))]).toEqual([
      'RT_NEEDS_ZERO_COPY_TRT',
    ]);
    expect(outcome.reports.map((r) => r.changed)).toEqual([true, true]);
    // No output, no temporary file, no lock file: the folder holds the input alone.
    expect(readdirSync(dir)).toEqual(['staged.pte']);
  });

  it('runs no pass on a program that fails the structural checks, with the findings on the refusal', async () => {
    const dir = tempDir('pipeline');
    const built = buildProgram(stagedKv());
    const decode = built.program.executionPlan.find((p) => p.name === 'decode')!;
    const call = decode.chains[0].instructions.find((i) => i.type === 'DelegateCall')!;
    if (call.type === 'DelegateCall') call.args[0] = 255;
    const input = join(dir, 'dangling.pte');
    await writePte(input, built.program, built.segments);
    const out = join(dir, 'out.pte');
    const refusal = await runPipeline(input, { request: { zeroCopyKv: {} }, output: { path: out, command: 'test' } }).catch(
      (e: unknown) => e,
    );
    expect(refusal).toMatchObject({ code: 'PASS_INPUT_UNSOUND' });
    expect((refusal as { diagnostics: { code: string }[] }).diagnostics.map((d) => d.code)).toContain('STRUCT_VALUE_INDEX');
    expect(existsSync(out)).toBe(false);
  });

  it('claims the target before it reads the input: a target it may not replace fails first', async () => {
    const dir = tempDir('pipeline');
    const input = await staged(dir);
    const link = join(dir, 'link.pte');
    symlinkSync(input, link);
    await expect(runPipeline(join(dir, 'missing.pte'), { request: {}, output: { path: link, command: 'test' } })).rejects.toMatchObject({
      code: 'OUTPUT_NOT_REGULAR',
    });
    mkdirSync(join(dir, 'folder.pte'));
    await expect(
      runPipeline(join(dir, 'missing.pte'), { request: {}, output: { path: join(dir, 'folder.pte'), command: 'test' } }),
    ).rejects.toMatchObject({ code: 'OUTPUT_NOT_REGULAR' });
  });

  it('on a copy, leaves the opened program as it was (verify runs the staged program beside its twin)', async () => {
    const dir = tempDir('pipeline');
    const input = await staged(dir);
    await withPte(input, async (pte) => {
      const before = structuredClone(pte.program);
      const outcome = await runPipeline(pte, { request: { zeroCopyKv: {} }, copy: true, output: null });
      expect(outcome.changed).toBe(true);
      expect(outcome.program).not.toBe(pte.program);
      expect(pte.program).toEqual(before);
    });
  });

  it("verify's derived twin is checked under verify's runtime rules as it is made, and refused with the twin's findings", async () => {
    const dir = tempDir('pipeline');
    const input = await staged(dir);
    // Refused before any run: no runner is needed (none is given).
    const r = await verifyProgram(input, { zeroCopyKv: true, runtime: parseRuntimes(['stock-trt']) });
    expect(r.check.refused).toBe(true);
    expect(r.runs).toEqual([]);
    expect([...new Set(r.check.diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.file}: ${d.code}`))]).toEqual([
      'zero-copy twin: RT_NEEDS_ZERO_COPY_TRT',
    ]);
  });
});
