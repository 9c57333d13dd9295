// The model zoo's conformance suite (python-bridge/zoo/: tiny transformers
// models exported as their authors document) through the user's four steps,
// each model in its own `trtx` processes: export --engine reference --budget
// 8GiB, check, rewrite --zero-copy-kv to a new file, verify --zero-copy-kv of
// the staged program and of the rewritten one (the reference outputs carried
// by the rewrite, no flag to help), each of whose comparison with eager PyTorch (docs/reference-lowering.md section 4,
// `reference` in verify --json) must stay within 1e-4 for these float32
// models. The zoo is built on first use (npm run zoo); a zoo that cannot be
// built fails, never skips.
//
// The models are split over three test files (test/real-zoo-*.test.ts) so
// that vitest's workers share them: each export is seconds of CPU in
// Python, and in one file the ten were the suite's critical path (issue 26:
// 458 s of a 485 s npm test). ZOO_GROUPS names every model once; each file
// checks that the groups together are exactly the zoo's manifest.
// TRTX_ZOO_RESULTS=FILE writes each file's results as JSON beside FILE,
// named FILE's stem plus the group (scripts/zoo-table.ts --from, repeated).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Zoo, ZooModel } from '../../scripts/zoo-build.js';
import { programs, referenceOf, runZooModel, trtx, type StepResult, type ZooRun } from '../../scripts/zoo-steps.js';
import { readReference, type Reference } from '../../src/reference/read.js';
import { elementAt, ITEM_SIZE, viewOf } from '../../src/util/dtype.js';
import { tempDir } from './temp.js';
import { ZOO_TIMEOUT_MS, realZoo } from './zoo.js';

/** Every zoo model, once: one missing from the manifest fails, as one added without a group here does. */
export const ZOO_GROUPS = {
  'llama-like': ['hf-llama', 'hf-qwen3', 'hf-mistral', 'hf-phi3'],
  decoders: ['hf-olmo', 'hf-gemma3', 'hf-gpt2'],
  encoders: ['hf-qwen2-embeds', 'hf-bert', 'hf-resnet'],
  // Llama-3.2-1B's structure at CI size (python-bridge/bench_models/), float32, bfloat16 and float16: issue 36.
  'real-size': ['llama32-ci', 'llama32-ci-bf16', 'llama32-ci-fp16'],
  // Biased projections in bfloat16 (Qwen2, GPT-2, BERT), and the float32 model whose weights qwen2-ci-bf16 holds rounded: issue 40.
  'half-precision': ['qwen2-ci', 'qwen2-ci-bf16', 'hf-gpt2-bf16', 'hf-bert-bf16'],
} as const;
export type ZooGroup = keyof typeof ZOO_GROUPS;

/** Where a group's results go under TRTX_ZOO_RESULTS=FILE: FILE's stem, the group, .json. */
export function resultsFileFor(file: string, group: ZooGroup): string {
  return `${file.replace(/\.json$/, '')}.${group}.json`;
}

const MODEL_MS = 600_000;
/** A half-precision zoo model and the float32 one whose weights it holds rounded (python-bridge/zoo/models.py): eager float32 is the yardstick of both. */
const YARDSTICKS: Record<string, string> = { 'qwen2-ci-bf16': 'qwen2-ci' };

/** The largest |a - b| over every floating output of every step of two eager reference files (the same model in two dtypes). */
function maxAbsBetween(a: Reference, b: Reference): number {
  let worst = 0;
  for (const m of a.methods) {
    const other = b.methods.find((x) => x.name === m.name);
    m.steps.forEach((step, s) =>
      step.outputs.forEach((out, k) => {
        const theirs = other?.steps[s]?.outputs[k];
        if (out.kind !== 'tensor' || theirs?.kind !== 'tensor') return;
        const va = viewOf(out.data);
        const vb = viewOf(theirs.data);
        const n = out.data.length / ITEM_SIZE[out.dtype];
        for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(elementAt(va, out.dtype, i) - elementAt(vb, theirs.dtype, i)));
      }),
    );
  }
  return worst;
}
/** Against eager PyTorch, per output dtype: verify's own defaults (docs/reference-lowering.md section 4: atol 1e-4, float16 1e-2, bfloat16 5e-2). */
const MAX_ABS: Record<string, number> = { float32: 1e-4, float16: 1e-2, bfloat16: 5e-2 };
const maxAbsOf = (model: ZooModel) => Math.max(...Object.values(model.methods).flatMap((m) => m.outputs.map((o) => MAX_ABS[o.dtype] ?? 0)));

/** The steps on each model of `group`, in this file's worker. */
export function zooSuite(group: ZooGroup): void {
  const MODELS = ZOO_GROUPS[group];
  let zoo: Zoo;
  let dir: string;
  const results: ZooRun[] = [];
  beforeAll(async () => {
    zoo = await realZoo();
    dir = tempDir(`real-zoo-${group}`);
  }, ZOO_TIMEOUT_MS);
  afterAll(() => {
    if (process.env.TRTX_ZOO_RESULTS)
      writeFileSync(
        resultsFileFor(process.env.TRTX_ZOO_RESULTS, group),
        JSON.stringify({ manifest: zoo?.manifest, runs: results }, null, 2),
      );
  });

  const said = (s: StepResult | undefined) => (s ? `trtx ${s.args.join(' ')} (exit ${s.exitCode})\n${s.stdout}\n${s.stderr}` : 'not run');
  const entry = (name: string): ZooModel => {
    const m = zoo.manifest.models.find((x) => x.name === name);
    if (!m) throw new Error(`the zoo at ${zoo.dir} has no model ${name}`);
    return m;
  };

  describe('the zoo', () => {
    it('holds every model of the groups and no other, made by a pinned transformers, each archive loading without transformers', () => {
      const all = Object.values(ZOO_GROUPS).flat();
      expect(new Set(all).size, 'a model is in two groups').toBe(all.length);
      expect(zoo.manifest.models.map((m) => m.name).sort()).toEqual([...all].sort());
      expect(zoo.manifest.versions.transformers).toMatch(/^5\.\d+\.\d+$/);
      expect(zoo.manifest.versions.torch).toMatch(/^2\.13\.0/);
      expect(zoo.lean.map((r) => [r.name, r.ok])).toEqual(zoo.manifest.models.map((m) => [m.name, true]));
      for (const m of zoo.manifest.models) expect(existsSync(join(zoo.dir, m.file)), m.file).toBe(true);
    });
  });

  describe.each(MODELS)('%s: export, check, rewrite --zero-copy-kv, verify --zero-copy-kv', (name) => {
    it('each step succeeds and verify matches eager PyTorch within its dtype\u2019s tolerance', { timeout: MODEL_MS }, async () => {
      const model = entry(name);
      const work = join(dir, name);
      const run = await runZooModel(zoo.dir, model, work);
      results.push(run);
      const { staged, zeroCopy } = programs(model);

      const { export: exported, check, rewrite, verify, verifyRewritten } = run.steps;
      expect(exported?.exitCode, said(exported)).toBe(0);
      expect(exported?.stdout).toMatch(/trtx reference engines/);
      // The eager reference outputs beside the program (docs/reference-lowering.md section 2).
      const refFile = join(work, `${staged}.reference.json`);
      expect(existsSync(refFile), `${refFile} was not written`).toBe(true);
      const reference = JSON.parse(readFileSync(refFile, 'utf8')) as { schema: string; steps: number; methods: { name: string }[] };
      expect(reference.schema).toBe('trtx.reference/1');
      expect(reference.methods.map((m) => m.name)).toEqual(Object.keys(model.methods));

      expect(check?.exitCode, said(check)).toBe(0);
      // --budget 8GiB is more than any zoo model's weights: each engine keeps them all, and check says the budget streams nothing (issue 36).
      expect(check?.stdout).toMatch(/^0 errors, \d+ warnings?$/m);
      expect(check?.stdout).toMatch(/TRT_BUDGET_STREAMS_NOTHING/);
      const warned = [...(check?.stdout ?? '').matchAll(/^\s+warning (\w+)/gm)].map((m) => m[1]);
      expect(new Set(warned), said(check)).toEqual(new Set(['TRT_BUDGET_STREAMS_NOTHING']));

      // The same CI lines for every model: without a KV cache, rewrite --zero-copy-kv notes it and writes the program as it is.
      expect(rewrite?.exitCode, said(rewrite)).toBe(0);
      expect(existsSync(join(work, zeroCopy))).toBe(true);
      if (model.cache.buffers > 0) expect(rewrite?.stdout).toMatch(/stamped zero_copy_kv/);
      else expect(rewrite?.stdout).toMatch(/no KV cache to make zero-copy/);

      expect(verify?.exitCode, said(verify)).toBe(0);
      expect(run.reference?.present, `verify --json carried no reference comparison:\n${said(verify)}`).toBe(true);
      expect(run.reference?.comparisons).toBeGreaterThan(0);
      expect(run.reference?.maxAbs).toBeLessThanOrEqual(maxAbsOf(model));
      // The chain holds: rewrite -o carried eager PyTorch's outputs beside the rewritten program, and its verify compared with them.
      expect(existsSync(join(work, `${zeroCopy}.reference.json`)), said(rewrite)).toBe(true);
      expect(rewrite?.stdout).toContain(
        `reference: ${zeroCopy}.reference.json (eager PyTorch's outputs, copied from ${staged}.reference.json`,
      );
      expect(verifyRewritten?.args).toEqual(['verify', '--zero-copy-kv', '--json', zeroCopy]);
      expect(verifyRewritten?.exitCode, said(verifyRewritten)).toBe(0);
      expect(run.referenceRewritten, said(verifyRewritten)).toMatchObject({ status: 'compared', file: `${zeroCopy}.reference.json` });
      expect(run.referenceRewritten?.comparisons).toBeGreaterThan(0);
      expect(run.referenceRewritten?.maxAbs).toBeLessThanOrEqual(maxAbsOf(model));
    });
  });

  for (const [half, float] of Object.entries(YARDSTICKS)) {
    if (!(MODELS as readonly string[]).includes(half)) continue;
    describe(`${half} against eager float32 (${float}: the same weights unrounded)`, () => {
      it(
        'the program is no further from eager float32 than 1.5x eager bfloat16 is, and ExecuTorch\u2019s CPU kernels are',
        { timeout: MODEL_MS },
        async () => {
          const work = join(dir, half);
          const program = join(work, programs(entry(half)).staged);
          const halfRef = `${program}.reference.json`;
          const floatRef = join(dir, float, `${programs(entry(float)).staged}.reference.json`);
          // describe.each runs the models first: both programs and their eager outputs are there.
          expect(existsSync(program) && existsSync(halfRef) && existsSync(floatRef), 'the models were not exported').toBe(true);
          const eager = maxAbsBetween(await readReference(halfRef), await readReference(floatRef));
          const program32 = async (kernels: string) =>
            referenceOf(
              (await trtx(['verify', '--json', '--caller-stream', 'off', '--kernels', kernels, '--reference', floatRef, program], work))
                .stdout,
            ).maxAbs;
          const aten = await program32('aten');
          const executorch = await program32('executorch');
          expect(eager).toBeGreaterThan(0);
          expect(aten, `eager bfloat16 is ${eager} from eager float32`).not.toBeNull();
          expect(aten ?? Infinity).toBeLessThanOrEqual(1.5 * eager);
          // What ATen's kernels fix: ExecuTorch's bfloat16 addmm rounds the biased projections apart from eager.
          expect(executorch ?? 0).toBeGreaterThan(1.5 * eager);
        },
      );
    });
  }
}
