// Issue 41, "answers first": on a program with many caches `trtx inspect`
// opens with a one-screen summary and lists segments, operators and aliases
// only under --all; every text output shortens long name lists as `trtx
// check` does ("a, b, c, d and 56 more"), while --json keeps them whole.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { renderVerify } from '../src/cli/commands/verify.js';
import type { VerifyResult } from '../src/verify/verify.js';
import { shortList, shortenNameLists } from '../src/util/display.js';
import { runCli } from './helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'trtx-answers-first-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let file: string;
beforeAll(async () => {
  // 30 layers: 60 caches, 120 aliases over two methods.
  file = join(dir, 'seed.pte');
  await writeFixture(file, kvDecoder({ mode: 'staged', scale: 'seed' }));
});

describe('trtx inspect on a program with many caches', () => {
  it('opens with the summary; segments, operators and aliases wait for --all', async () => {
    const r = await runCli(['inspect', file]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    const firstMethod = lines.findIndex((l) => l.startsWith('method '));
    const summary = lines.slice(0, firstMethod);
    expect(summary.length).toBeLessThanOrEqual(15);
    expect(summary.join('\n')).toMatch(/^ {2}methods: decode \(2 inputs, 1 output, 1 delegate\), prefill /m);
    expect(summary.join('\n')).toMatch(/^ {2}delegates: 2 TensorRTBackend \(synthetic reference engine\)$/m);
    expect(summary.join('\n')).toMatch(/^ {2}staging per execution of decode: host->device /m);
    expect(summary.join('\n')).toMatch(/^ {2}caches: 60, updated in place by their engines \(kv_cache_update\)$/m);
    expect(summary.at(-2)).toBe('  3 segments, 6 operators, 120 aliases: --all lists them');
    expect(lines.filter((l) => /^\s+(segment \d+:|alias |op )/.test(l))).toEqual([]);
    expect(r.stdout).toMatch(
      /inputs b_layers_0_attn_k_cache, b_layers_0_attn_v_cache, b_layers_1_attn_k_cache, b_layers_1_attn_v_cache and 58 more;/,
    );
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(250);
    expect(lines.length).toBeLessThan(50);
  });

  it('--all lists every segment, operator and alias and every blob binding', async () => {
    const r = await runCli(['inspect', file, '--all']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.filter((l) => /^ {2}segment \d+:/.test(l))).toHaveLength(3);
    expect(lines.filter((l) => /^ {4}alias /.test(l))).toHaveLength(120);
    expect(lines.filter((l) => /^ {2}op /.test(l))).toHaveLength(6);
    expect(r.stdout).not.toMatch(/--all lists them|and \d+ more/);
  });

  it('--json keeps every field and whole lists', async () => {
    const r = await runCli(['inspect', file, '--json']);
    const j = JSON.parse(r.stdout) as {
      program: { segments: unknown[] };
      methods: { delegates: { tensorrt: { aliased: unknown[]; inputs: string[] } }[] }[];
    };
    expect(j.program.segments).toHaveLength(3);
    expect(j.methods[0]?.delegates[0]?.tensorrt.aliased).toHaveLength(60);
    expect(j.methods[0]?.delegates[0]?.tensorrt.inputs).toHaveLength(62);
  });
});

describe('long name lists in text output', () => {
  const names = Array.from({ length: 48 }, (_, i) => `b_layers_${i}_attn_k_cache`);

  it('shortens lists as check does, leaving sentences and short lists alone', () => {
    expect(shortList(names)).toBe(
      'b_layers_0_attn_k_cache, b_layers_1_attn_k_cache, b_layers_2_attn_k_cache, b_layers_3_attn_k_cache and 44 more',
    );
    expect(shortList(['a', 'b', 'c', 'd'])).toBe('a, b, c, d');
    expect(shortenNameLists(`reads ${names.join(', ')} before writing them. Device arenas, as said, are not cleared`)).toBe(
      `reads ${shortList(names)} before writing them. Device arenas, as said, are not cleared`,
    );
    expect(shortenNameLists('ends with a, b, c, d, e.')).toBe('ends with a, b, c, d and 1 more.');
  });

  it("verify's caches line and assertion lines name a few; the result keeps them whole", () => {
    const detail = `required: the zero-copy program reads ${names.join(', ')} before writing them`;
    const r = {
      file: 'seed.pte',
      mode: 'zero-copy',
      steps: 2,
      methods: ['decode'],
      runtime: { delegate: 'trtx-patched', memory: 'executorch' },
      notes: [],
      check: { refused: false, diagnostics: [], summary: { line: 'clean' } },
      device: { kind: 'cpu' },
      engines: {
        tensorrt: 0,
        reference: 0,
        synthetic: 0,
        programs: { engines: 0, instructions: 0, operators: 0, weight_bytes: 0, program_bytes: 0 },
        unknown: 0,
      },
      budgets: [],
      caches: names,
      options: { twin_contract: false, init_device_buffers: false },
      runs: [],
      memory: null,
      reference: { note: 'no reference outputs', comparisons: [], worst: null },
      assertions: [{ name: `caches ${names.join(', ')} change every step`, ok: true, detail }],
    } as unknown as VerifyResult;
    const lines = renderVerify(r, { color: false });
    expect(lines).toContain(`  caches: ${shortList(names)}`);
    expect(lines).toContain(
      `  ok   caches ${shortList(names)} change every step (required: the zero-copy program reads ${shortList(names)} before writing them)`,
    );
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(400);
    expect(r.assertions[0]?.detail).toBe(detail);
  });
});
