// What a TensorRT delegate's engine bytes are, and the line every command
// prints about a program whose delegates hold trtx reference engines.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderBlob, writeFixture } from '../src/examples/builder.js';
import { cloneSpec, delegateOf, methodOf } from '../src/examples/broken.js';
import { multiEngine, trtSingle } from '../src/examples/programs.js';
import { withPte } from '../src/pte/open.js';
import { engineCensus, engineKindOf, standinEngineLines, type EngineCensus } from '../src/tensorrt/engine-kind.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('engine-kind');
const enc = (s: string) => new TextEncoder().encode(s);
const NO_PROGRAMS = { engines: 0, instructions: 0, operators: 0, weight_bytes: 0, program_bytes: 0 };
/** A census of version-1 (synthetic) reference engines. */
const census = (tensorrt: number, synthetic: number, unknown: number): EngineCensus => ({
  tensorrt,
  reference: synthetic,
  synthetic,
  programs: NO_PROGRAMS,
  unknown,
});
const line = (c: EngineCensus) => standinEngineLines(c)[0] ?? null;

/** trtSingle with its engine's first bytes replaced. */
async function withEngineHead(name: string, head: Uint8Array): Promise<string> {
  const spec = cloneSpec(trtSingle());
  const d = delegateOf(methodOf(spec, 'forward'), 'trt');
  const bytes = renderBlob(d.blob).slice();
  bytes.set(head, new DataView(bytes.buffer, bytes.byteOffset).getUint32(12, true));
  d.blob = { kind: 'bytes', bytes };
  const path = join(dir, name);
  await writeFixture(path, spec);
  return path;
}

describe('engineKindOf', () => {
  it('reads the identifier at bytes 4..7 for a reference engine and the plan magic at 0..3 for TensorRT', () => {
    expect(engineKindOf(enc('\x10\x00\x00\x00TRXE'))).toBe('reference');
    expect(engineKindOf(enc('ftrt\x00\x00\x00\x00'))).toBe('tensorrt');
    expect(engineKindOf(enc('ftr'))).toBe('unknown');
    expect(engineKindOf(enc('\x00\x00\x00\x00TRXF'))).toBe('unknown');
  });
});

describe('engineCensus and the line the commands print', () => {
  it("counts the fixtures' reference engines, a TensorRT plan and an unknown engine", async () => {
    const single = join(dir, 'single.pte');
    await writeFixture(single, trtSingle());
    const three = join(dir, 'three.pte');
    await writeFixture(three, multiEngine(3));
    const plan = await withEngineHead('plan.pte', enc('ftrt\x00\x00\x00\x00'));
    const other = await withEngineHead('other.pte', enc('\x00\x00\x00\x00XXXX'));
    expect(await withPte(single, engineCensus)).toEqual(census(0, 1, 0));
    expect(await withPte(three, engineCensus)).toEqual(census(0, 3, 0));
    expect(await withPte(plan, engineCensus)).toEqual(census(1, 0, 0));
    expect(await withPte(other, engineCensus)).toEqual(census(0, 0, 1));
  });

  it('says how many of the delegates hold reference engines, and nothing when none does', () => {
    expect(line(census(0, 1, 0))).toMatch(
      /^1 TensorRT delegate holds a synthetic reference engine, not a TensorRT plan \(fixtures and benchmarks; it computes a made-up function, not the model\)/,
    );
    expect(line(census(0, 3, 0))).toMatch(/^3 TensorRT delegates hold synthetic reference engines, not TensorRT plans/);
    expect(line(census(1, 2, 0))).toMatch(/^2 of 3 TensorRT delegates hold synthetic reference engines/);
    expect(line(census(2, 0, 0))).toBeNull();
  });

  it('inspect, check and their --json say it for a reference engine and not for a plan', async () => {
    const single = join(dir, 'single.pte');
    const plan = await withEngineHead('plan2.pte', enc('ftrt\x00\x00\x00\x00'));
    const inspect = JSON.parse((await runCli(['inspect', single, '--json'])).stdout);
    expect(inspect.engines).toEqual(census(0, 1, 0));
    expect(inspect.methods[0].delegates[0].tensorrt.engine).toBe('reference');
    expect(inspect.methods[0].delegates[0].tensorrt.reference).toEqual({
      version: 1,
      synthetic: true,
      program: null,
      // trt-single bakes no budget: TensorRT decides at load.
      streaming: {
        weight_streaming: true,
        streamable_weight_bytes: 64 << 20,
        budget_bytes: null,
        resident_bytes: null,
        streamed_bytes_per_execute: null,
      },
    });
    expect((await runCli(['inspect', single])).stdout).toMatch(
      /engine: synthetic reference engine \(fixtures and benchmarks; computes a made-up function, not the model\)/,
    );
    expect((await runCli(['inspect', single])).stdout).toMatch(/blob TR01: synthetic reference engine \d+ B/);
    const planText = (await runCli(['inspect', plan])).stdout;
    expect(planText).toMatch(/blob TR01: TensorRT plan \d+ B/);
    expect(planText).not.toMatch(/reference engine/);
    expect((await runCli(['check', plan])).stdout).not.toMatch(/reference engine/);
    expect(JSON.parse((await runCli(['check', plan, '--json'])).stdout).engines).toEqual(census(1, 0, 0));
  });
});
