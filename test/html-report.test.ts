// The HTML memory-plan report without a browser: what the plan model finds
// (placements, copies, bindings, aliases) against the programs' own facts,
// that the page is self-contained and escapes every name, that it is written
// atomically and never over its input, and that no engine byte is read.
import { beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildProgram, writeFixture } from '../src/examples/builder.js';
import { SPEC_TARGET_DEVICE, setSpec } from '../src/tensorrt/compile-specs.js';
import { encodePte, pteFromBytes } from './helpers/memory-pte.js';
import { kvDecoder } from '../src/examples/catalogue.js';
import { writeSparsePte } from '../fixtures/sparse.js';
import type { ProgramSpec } from '../src/examples/spec.js';
import { memoryPlan, type MemoryPlan } from '../src/inspect/memory-plan.js';
import { renderInspectHtml } from '../src/html/page.js';
import { summarize } from '../src/inspect/summary.js';
import { openPte, withPte } from '../src/pte/open.js';
import { runCli } from './helpers/cli.js';
import { corpusPath, corpusPrograms } from './helpers/corpus.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('html');

const staged = join(dir, 'kv-staged.pte');
const zeroCopy = join(dir, 'kv-zero-copy.pte');
beforeAll(async () => {
  await writeFixture(staged, kvDecoder({ mode: 'staged' }));
  await writeFixture(zeroCopy, kvDecoder({ mode: 'zero-copy' }));
});

const planOf = (file: string) => withPte(file, (pte) => memoryPlan(pte));
const tensors = (p: MemoryPlan, method: string) => p.methods.find((m) => m.name === method)!.arenas.flatMap((a) => a.tensors);

describe('memory plan model', () => {
  it('places every planned tensor where the program says, and moves the caches to the device arena in the zero-copy program', async () => {
    const [s, z] = [await planOf(staged), await planOf(zeroCopy)];
    const cache = (p: MemoryPlan) => tensors(p, 'decode').find((t) => t.fqn === 'layers.0.attn.k_cache')!;
    expect(cache(s)).toMatchObject({ arena: 1, device: 'cpu', offset: 0, bytes: 256, dtype: 'float' });
    expect(cache(z)).toMatchObject({ arena: 2, device: 'cuda:0', bytes: 256 });
    // Each tensor's place is the inspect JSON's arena device, and sits inside its arena.
    for (const file of [staged, zeroCopy]) {
      const [plan, inspect] = await withPte(file, async (pte) => [await memoryPlan(pte), await summarize(pte)] as const);
      for (const m of plan.methods) {
        const im = inspect.methods.find((x) => x.name === m.name)!;
        for (const a of m.arenas) {
          expect(im.arenas.find((x) => x.index === a.index)).toMatchObject({ size: a.size, device: a.device });
          for (const t of a.tensors) expect(t.offset + t.bytes).toBeLessThanOrEqual(a.size);
        }
        // Bytes moved per execution are inspect's figures.
        expect(m.staging).toEqual(im.staging);
        expect(m.copies.filter((c) => c.direction === 'host->device').reduce((n, c) => n + c.bytes, 0)).toBe(
          im.staging.host_to_device_bytes,
        );
        expect(m.copies.filter((c) => c.direction === 'device->host').reduce((n, c) => n + c.bytes, 0)).toBe(
          im.staging.device_to_host_bytes,
        );
      }
    }
  });

  it('binds delegate arguments to bindings by the runtime arity rule: staged returns aliased outputs, zero-copy elides them', async () => {
    const [s, z] = [await planOf(staged), await planOf(zeroCopy)];
    const d = (p: MemoryPlan) => p.methods.find((m) => m.name === 'decode')!.delegates[0];
    expect(d(s).zeroCopy).toBe(false);
    expect(d(s).aliases.every((a) => !a.elided)).toBe(true);
    expect(d(s).bindings.find((b) => b.binding === 'output0')!.value).not.toBeNull();
    expect(d(z).zeroCopy).toBe(true);
    expect(d(z).aliases.map((a) => [a.output, a.elided])).toEqual([
      ['output0', true],
      ['output1', true],
      ['output2', true],
      ['output3', true],
    ]);
    expect(d(z).bindings.find((b) => b.binding === 'output0')!.value).toBeNull();
    // The zero-copy engine is fed the cache buffer itself.
    expect(d(z).bindings.find((b) => b.binding === 'b_layers_0_attn_k_cache')!.label).toBe('layers.0.attn.k_cache');
    expect(d(s).bindings.find((b) => b.binding === 'b_layers_0_attn_k_cache')!.label).toBe('b_layers_0_attn_k_cache');
  });

  it('names a delegate\u2019s target_device as read, a cpu target included', async () => {
    const built = buildProgram(kvDecoder({ mode: 'staged' }));
    const cuda = await memoryPlan(pteFromBytes(encodePte(built.program, built.segments)));
    expect(cuda.methods.find((m) => m.name === 'decode')!.delegates[0].targetDevice).toBe('cuda:0');
    const d = built.program.executionPlan.find((p) => p.name === 'decode')!.delegates[0];
    d.compileSpecs = setSpec(d.compileSpecs, SPEC_TARGET_DEVICE, new TextEncoder().encode('cpu'));
    const cpu = await memoryPlan(pteFromBytes(encodePte(built.program, built.segments)));
    expect(cpu.methods.find((m) => m.name === 'decode')!.delegates[0].targetDevice).toBe('cpu:0');
  });

  it('reads every corpus program (no delegates, inline constants, no extended header)', async () => {
    for (const name of corpusPrograms()) {
      const plan = await planOf(corpusPath(name));
      expect(plan.methods.length).toBeGreaterThan(0);
      const html = renderInspectHtml(plan);
      expect(html).toContain('<main id="main"');
    }
  });

  it('never reads an engine byte: only blob headers and metadata, also in a 4 GiB program', async () => {
    const big = join(dir, 'big.pte');
    writeSparsePte(big, kvDecoder({ mode: 'staged' }), 2 * 1024 ** 3);
    const pte = await openPte(big);
    const reads: [number, number][] = [];
    const read = pte.readRange.bind(pte);
    pte.readRange = (offset, length) => {
      reads.push([offset, length]);
      return read(offset, length);
    };
    try {
      const plan = await memoryPlan(pte);
      expect(plan.fileSize).toBeGreaterThan(4 * 1024 ** 3);
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.reduce((n, [, l]) => n + l, 0)).toBeLessThan(64 * 1024);
    } finally {
      await pte.close();
    }
  });
});

describe('the page', () => {
  it('is self-contained: no external resource, a CSP that forbids fetching, inline style and script only', async () => {
    const html = renderInspectHtml(await planOf(staged));
    expect(html).not.toMatch(/\b(src|href)="(?!#)/);
    expect(html).not.toMatch(/<link\b|@import|url\((?!#)/);
    expect(html).toContain(`content="default-src 'none'`);
    expect(html).toMatch(/@media \(prefers-color-scheme: dark\)/);
  });

  it('escapes names from the file: a tensor named like markup stays text', async () => {
    const spec: ProgramSpec = kvDecoder({ mode: 'staged' });
    const evil = '</title><script>alert(1)</script>&"\'';
    const buffer = spec.methods[0].tensors.find((t) => t.fqn)!;
    buffer.fqn = evil;
    const file = join(dir, 'evil.pte');
    await writeFixture(file, spec);
    const html = renderInspectHtml(await planOf(file));
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(html).toContain('&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;');
  });
});

describe('inspect --html and diff --html', () => {
  it('write the page atomically and say so; --json still prints the document', async () => {
    const out = join(dir, 'out', 'plan.html');
    mkdirSync(join(dir, 'out'), { recursive: true });
    const r = await runCli(['inspect', staged, '--html', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^wrote .*plan\.html \([0-9.]+ KiB\): memory plan of 2 method\(s\)/);
    expect(readFileSync(out, 'utf8')).toContain('layers.0.attn.k_cache');
    const j = await runCli(['inspect', staged, '--html', out, '--json']);
    expect(JSON.parse(j.stdout).schema).toBe('trtx.inspect/1');
    const d = await runCli(['diff', staged, zeroCopy, '--html', join(dir, 'out', 'diff.html'), '--exit-code']);
    expect(d.code).toBe(1);
    expect(d.stdout).toMatch(/^wrote .*diff\.html .*change\(s\), memory plans side by side/);
    const page = readFileSync(join(dir, 'out', 'diff.html'), 'utf8');
    expect(page).toContain('A (staged)');
    expect(page).toContain('B (zero-copy)');
    expect(readdirSync(join(dir, 'out')).sort()).toEqual(['diff.html', 'plan.html']);
  });

  it('refuse to overwrite an input program, and leave nothing behind when the target cannot be written', async () => {
    const before = readFileSync(staged);
    const r = await runCli(['inspect', staged, '--html', staged]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: OUTPUT_IS_INPUT: /);
    const d = await runCli(['diff', staged, zeroCopy, '--html', zeroCopy]);
    expect(d.code).toBe(2);
    expect(readFileSync(staged).equals(before)).toBe(true);
    const missing = await runCli(['inspect', staged, '--html', join(dir, 'no-such-dir', 'x.html')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: OUTPUT_DIR: /);
    expect(existsSync(join(dir, 'no-such-dir'))).toBe(false);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
