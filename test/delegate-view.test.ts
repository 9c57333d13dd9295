// Each fact is read once per program state (src/tensorrt/delegate-view.ts):
// a rewrite decodes each TensorRT delegate's compile specs once for every
// spec list it goes through (the input, after the budget pass, after the
// zero-copy pass), parses each blob header once for the passes and the
// checks together, and sums the multi-engine budget once per state. The
// decoders are wrapped in counting spies, so a reader that decodes again
// (the budget pass, the TensorRT check, the zero-copy pass and checks, the
// dataflow's device) shows up as an extra call.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { writeFixture, buildProgram } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { multiEngine } from '../src/examples/programs.js';
import { runPipeline } from '../src/pipeline/run.js';
import { withPte } from '../src/pte/open.js';
import * as compileSpecs from '../src/tensorrt/compile-specs.js';
import * as blobHeader from '../src/tensorrt/blob-header.js';
import * as resident from '../src/tensorrt/resident.js';
import { blobOf, readDelegateBlobs, specView } from '../src/tensorrt/delegate-view.js';
import { delegatesOf, isTensorRT } from '../src/tensorrt/delegates.js';
import { tempDir } from './helpers/temp.js';

vi.mock('../src/tensorrt/compile-specs.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../src/tensorrt/compile-specs.js')>();
  return { ...m, decodeCompileSpecs: vi.fn(m.decodeCompileSpecs), zeroCopyStampOf: vi.fn(m.zeroCopyStampOf) };
});
vi.mock('../src/tensorrt/blob-header.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../src/tensorrt/blob-header.js')>();
  return { ...m, parseBlobHeader: vi.fn(m.parseBlobHeader) };
});
vi.mock('../src/tensorrt/resident.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../src/tensorrt/resident.js')>();
  return { ...m, residentBudget: vi.fn(m.residentBudget) };
});

const decodes = vi.mocked(compileSpecs.decodeCompileSpecs);
const stamps = vi.mocked(compileSpecs.zeroCopyStampOf);
const headers = vi.mocked(blobHeader.parseBlobHeader);
const totals = vi.mocked(resident.residentBudget);
const GiB = 1n << 30n;

/** A spec list as text, to compare a decoded list with one read back from the file. */
const contentOf = (specs: readonly compileSpecs.CompileSpecEntry[]) =>
  JSON.stringify(specs.map((s) => [s.key, Buffer.from(s.value).toString('latin1')]));

async function stagedKv(): Promise<{ input: string; out: string }> {
  const dir = tempDir('delegate-view');
  const input = join(dir, 'staged.pte');
  await writeFixture(input, kvDecoder({ mode: 'staged' }));
  return { input, out: join(dir, 'out.pte') };
}

async function trtDelegates(path: string): Promise<number> {
  return withPte(path, (pte) => Promise.resolve(delegatesOf(pte, isTensorRT).length));
}

beforeEach(() => {
  for (const spy of [decodes, stamps, headers, totals]) spy.mockClear();
});

describe('a rewrite reads each fact once per program state', () => {
  it('--budget --zero-copy-kv: specs decoded once per delegate and state, each blob header parsed once', async () => {
    const { input, out } = await stagedKv();
    const n = await trtDelegates(input);
    expect(n).toBe(2);
    for (const spy of [decodes, stamps, headers, totals]) spy.mockClear();
    const outcome = await runPipeline(input, {
      request: { budget: { budget: 8n * GiB }, zeroCopyKv: {} },
      output: { path: out, command: 'test' },
    });
    expect(outcome.refused).toBe(false);
    expect(outcome.reports.map((r) => r.changed)).toEqual([true, true]);

    // Three states per delegate (as opened, budgeted, zero-copy), each spec list decoded once.
    const lists = decodes.mock.calls.map(([specs]) => specs);
    expect(lists).toHaveLength(3 * n);
    expect(new Set(lists).size).toBe(lists.length);
    expect(stamps).toHaveBeenCalledTimes(3 * n);
    // The last states decoded are the lists written.
    const written = await withPte(out, (pte) =>
      Promise.resolve(delegatesOf(pte, isTensorRT).map((r) => contentOf(r.delegate.compileSpecs))),
    );
    expect(lists.slice(-n).map(contentOf)).toEqual(written);
    // One header read per blob, shared by the zero-copy pass and the checks.
    expect(headers).toHaveBeenCalledTimes(n);
    // The multi-engine total: once after the budget (the pass's details), once on the result (the check).
    expect(totals).toHaveBeenCalledTimes(2);
  });

  it('--budget alone: the check on the result reuses the views and the total the pass made', async () => {
    const { input, out } = await stagedKv();
    const n = await trtDelegates(input);
    for (const spy of [decodes, stamps, headers, totals]) spy.mockClear();
    const outcome = await runPipeline(input, { request: { budget: { budget: 8n * GiB } }, output: { path: out, command: 'test' } });
    expect(outcome.refused).toBe(false);
    expect(outcome.checked.diagnostics.map((d) => d.code)).toContain('TRT_BUDGET_MULTI_ENGINE');
    const lists = decodes.mock.calls.map(([specs]) => specs);
    expect(lists).toHaveLength(2 * n);
    expect(new Set(lists).size).toBe(lists.length);
    expect(headers).toHaveBeenCalledTimes(n);
    expect(totals).toHaveBeenCalledTimes(1);
  });
});

describe('a view is never stale', () => {
  it('a spec list changed in place (an entry pushed, a value swapped) is decoded again', () => {
    const { program } = buildProgram(multiEngine(2));
    const d = program.executionPlan[0].delegates[0];
    const first = specView(d);
    expect(specView(d)).toBe(first);
    d.compileSpecs.push({ key: 'weight_streaming_budget', value: new TextEncoder().encode('7') });
    const pushed = specView(d);
    expect(pushed).not.toBe(first);
    expect(pushed.budgetEntries).toBe(first.budgetEntries + 1);
    const entry = d.compileSpecs.find((s) => s.key === 'weight_streaming_budget')!;
    entry.value = new TextEncoder().encode('not a number');
    expect(specView(d).budget).toMatchObject({ kind: 'invalid' });
  });

  it('a blob read for another data reference is read anew, not taken from the table', async () => {
    const { input } = await stagedKv();
    await withPte(input, async (pte) => {
      const blobs = await readDelegateBlobs(pte);
      const [a, b] = delegatesOf(pte, isTensorRT);
      headers.mockClear();
      expect(await blobOf(pte, a, blobs)).toBe(blobs.entries[0].read);
      expect(headers).toHaveBeenCalledTimes(0);
      // Point the first delegate at the second's data: its read is the second blob's (parsed once per
      // file, tensorrt/blob-once.ts: not parsed again), located under the first delegate.
      a.delegate.processed = { ...b.delegate.processed! };
      const moved = await blobOf(pte, a, blobs);
      expect(headers).toHaveBeenCalledTimes(0);
      expect(moved).not.toBe(blobs.entries[0].read);
      const second = blobs.entries[1].read;
      expect('blob' in moved && 'blob' in second && moved.blob === second.blob).toBe(true);
    });
  });
});
