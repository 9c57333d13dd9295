// Decoding is bounded by the file: shared-offset amplification is refused
// with PTE_DECODE_BUDGET in a bounded amount of memory, and a header's sizes
// are validated before any program byte is read (no read of what a header
// merely claims). Memory is measured in a child process (test/helpers/
// child-cli.ts) whose V8 heap is capped, so a regression fails here instead
// of swapping the machine.
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildProgram } from '../src/examples/builder.js';
import { CATALOGUE } from '../src/examples/catalogue.js';
import { repeatedLongName, sharedOperatorName, sharedValueTable } from '../fixtures/hostile.js';
import { parseHeader } from '../src/pte/header.js';
import { decodePteBytes } from '../src/pte/open.js';
import { DECODE_BUDGET_FACTOR, verifyProgramFlatBuffer } from '../src/pte/flatbuffer-verify.js';
import { REPORT_BUDGET_FACTOR, REPORT_BUDGET_FLOOR } from '../src/util/report-budget.js';
import { runChild } from './helpers/child-cli.js';
import { corpusPath, corpusPrograms } from './helpers/corpus.js';
import { encodePte } from './helpers/memory-pte.js';
import { tempDir } from './helpers/temp.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('budget');
});

const write = (name: string, bytes: Uint8Array) => {
  const p = join(dir, name);
  writeFileSync(p, bytes);
  return p;
};

function chargeRatio(bytes: Uint8Array): number {
  const h = parseHeader(bytes.subarray(0, 64), bytes.length);
  const size = h.extended ? h.extended.programSize : bytes.length;
  return verifyProgramFlatBuffer(bytes.subarray(0, size), h.rootOffset, Infinity).charged / size;
}

describe('the decode budget', () => {
  it('leaves headroom for every program a non-sharing encoder writes (ExecuTorch corpus, every fixture)', () => {
    const ratios = [
      ...corpusPrograms().map((n) => chargeRatio(new Uint8Array(readFileSync(corpusPath(n))))),
      ...CATALOGUE.map((e) => {
        const b = buildProgram(e.build());
        return chargeRatio(encodePte(b.program, b.segments));
      }),
    ];
    // Each byte is charged at most once when nothing is shared.
    expect(Math.max(...ratios)).toBeLessThanOrEqual(1);
    expect(Math.max(...ratios)).toBeLessThan(DECODE_BUDGET_FACTOR);
  });

  it('refuses a values vector whose entries all point at one tensor, naming where the budget ran out', () => {
    const bytes = sharedValueTable({ entries: 4096, nameBytes: 256 });
    expect(() => decodePteBytes(bytes)).toThrow(
      expect.objectContaining({
        code: 'PTE_DECODE_BUDGET',
        location: expect.stringMatching(/^program\.execution_plan\[0\]\.values\[\d+\]/),
      }),
    );
    // The same tensor once is an ordinary program.
    expect(decodePteBytes(sharedValueTable({ entries: 1, nameBytes: 256 })).program.executionPlan[0].values).toHaveLength(1);
  });

  it('refuses operators sharing one long name, whether they share the string or the table', () => {
    for (const share of ['string', 'table'] as const) {
      expect(() => decodePteBytes(sharedOperatorName({ operators: 64, nameBytes: 4096, share }))).toThrow(
        expect.objectContaining({ code: 'PTE_DECODE_BUDGET', location: expect.stringMatching(/operators\[\d+\]/) }),
      );
    }
  });
});

describe('amplification files through the CLI, memory measured in the child', () => {
  // What node + the CLI cost with nothing to decode, measured the same way.
  let floorMiB = 0;
  beforeAll(async () => {
    const r = await runChild(['inspect', '--json', corpusPath('add')]);
    expect(r.code).toBe(0);
    floorMiB = r.maxRssMiB;
  }, 60_000);

  // Before the budget: 804 KB took 15 s and 3.3 GB in check (then "no
  // problems"), and 1000 operators on one 1 MB name ended in INTERNAL
  // "Invalid string length" after 2 GB. Now: a coded refusal, exit 1, and
  // memory within a few times the file of the no-op floor.
  const cases = [
    ['values sharing one tensor (804 KB)', () => sharedValueTable({ entries: 200_000, nameBytes: 4096 }), 'values'],
    ['1000 operators sharing one 1 MB name', () => sharedOperatorName({ operators: 1000, nameBytes: 1 << 20 }), 'operators'],
    ['one operator table named 1000 times', () => sharedOperatorName({ operators: 1000, nameBytes: 1 << 20, share: 'table' }), 'operators'],
  ] as const;

  it.each(cases)(
    '%s: check and inspect --json refuse it with PTE_DECODE_BUDGET',
    async (_name, make, field) => {
      const bytes = make();
      const file = write(`amplified-${field}.pte`, bytes);
      const fileMiB = bytes.length / 2 ** 20;
      for (const args of [
        ['check', file],
        ['inspect', '--json', file],
        ['check', '--json', file],
      ]) {
        const r = await runChild(args);
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).not.toMatch(/INTERNAL|FATAL|heap/);
        expect(r.stdout + r.stderr).toContain('PTE_DECODE_BUDGET');
        if (args.includes('--json')) {
          const doc = JSON.parse(r.stdout);
          const code = doc.error?.code ?? doc.diagnostics?.[0]?.code;
          expect(code).toBe('PTE_DECODE_BUDGET');
          // The output is bounded too: a refusal, not a copy of the amplified program.
          expect(r.stdout.length).toBeLessThan(8192);
        }
        expect(r.maxRssMiB).toBeLessThan(floorMiB + 16 * fileMiB + 32);
      }
    },
    120_000,
  );
});

describe('one long name referenced by index many times', () => {
  // Indices may repeat (the format has no rule against it), so the decode
  // budget does not apply: reports show long names shortened
  // (src/util/display.ts) and charge what they build against
  // REPORT_BUDGET_FACTOR bytes per program byte (src/util/report-budget.ts).
  // Before: inspect aborted out of memory on this 270 KB file (3.2 GB of output).
  it('inspect, check and diff end in a report or REPORT_BUDGET, with output and memory in proportion to the file', async () => {
    const bytes = repeatedLongName({ references: 50_000, nameBytes: 65_536 });
    const file = write('repeated-name.pte', bytes);
    const fileMiB = bytes.length / 2 ** 20;
    const floor = await runChild(['inspect', '--json', corpusPath('add')]);
    for (const args of [
      ['inspect', file],
      ['inspect', '--json', file],
      ['check', '--json', file],
      ['diff', file, file],
    ]) {
      const r = await runChild(args);
      // diff's 1 means "the programs differ": a refused input is 2. It
      // charges each signature entry as inspect charges it, so it refuses
      // what inspect refuses.
      expect(args[0] === 'diff' ? [2] : [0, 1], `${args.join(' ')}: ${r.stderr.slice(0, 500)}`).toContain(r.code);
      expect(r.stderr).not.toMatch(/INTERNAL|heap/);
      if (args[0] === 'inspect' || args[0] === 'diff') expect(r.stdout + r.stderr).toContain('REPORT_BUDGET');
      expect(r.stdout.length).toBeLessThan(REPORT_BUDGET_FACTOR * bytes.length + REPORT_BUDGET_FLOOR);
      expect(r.maxRssMiB).toBeLessThan(floor.maxRssMiB + 64 * fileMiB + 32);
    }
  }, 120_000);

  it('a sound program of the same size reports in full', async () => {
    const bytes = repeatedLongName({ references: 1, nameBytes: 64 });
    const r = await runChild(['inspect', '--json', write('one-name.pte', bytes)]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).methods[0].inputs[0].name).toBe('N'.repeat(64));
  }, 60_000);
});

describe('header sizes are validated before any program byte is read', () => {
  // A program with an extended header and no segments (segment base 0), so
  // that program_size is bounded only by the file; the file is then
  // extended, sparsely, to hold the claimed size.
  function claiming(programSize: bigint): string {
    const { program } = decodePteBytes(new Uint8Array(readFileSync(corpusPath('add'))));
    program.segments = [];
    const bytes = encodePte(program, []);
    new DataView(bytes.buffer).setBigUint64(16, programSize, true);
    const file = write(`claims-${programSize}.pte`, bytes);
    truncateSync(file, Number(programSize) + 4096);
    return file;
  }

  it('a claimed 3 GiB program is refused as PTE_PROGRAM_SIZE (no abort), with the --json error document', async () => {
    const file = claiming(3n << 30n);
    for (const args of [
      ['inspect', '--json', file],
      ['check', '--json', file],
      ['inspect', file],
    ]) {
      const r = await runChild(args);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).not.toMatch(/Assertion|INTERNAL/);
      expect(r.stdout + r.stderr).toContain('PTE_PROGRAM_SIZE');
      if (args.includes('--json')) expect(JSON.stringify(JSON.parse(r.stdout))).toContain('header.extended.program_size');
      expect(r.maxRssMiB).toBeLessThan(200);
    }
  }, 60_000);

  it('a claimed 1 GiB program is read only as far as the flatbuffer reaches', async () => {
    const file = claiming(1n << 30n);
    const r = await runChild(['inspect', '--json', file]);
    // ExecuTorch's Program::load accepts a program_size the file holds; so
    // does trtx, without reading the gigabyte the flatbuffer never uses.
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).header.extended_header.program_size).toBe(2 ** 30);
    expect(r.maxRssMiB).toBeLessThan(200);
  }, 60_000);
});
