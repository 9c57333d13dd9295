// The runner's loader limits, each met by a hostile file (native-runner/
// src/integration/load_limits.h; the plugins' own limits are ctest's
// loader_limits_test): the verification level it loads with, the program
// part a header may claim, and the host memory a program may plan. Each says
// what `trtx check` does with the same file. Peak memory is the child's
// (getrusage through a python3 wrapper), never a timing.
import { beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { closeSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { buildProgram } from '../src/examples/builder.js';
import { trtSingle } from '../src/examples/programs.js';
import { runCli } from './helpers/cli.js';
import { encodePte } from './helpers/memory-pte.js';
import { BUILD_TIMEOUT_MS, sanitizedRunner } from './helpers/runner.js';
import { SHAPES } from './helpers/agreement-shapes.js';
import { tempDir } from './helpers/temp.js';

let runner = '';
let dir = '';
beforeAll(async () => {
  runner = await sanitizedRunner();
  dir = tempDir('runner-limits');
}, BUILD_TIMEOUT_MS);

/** Runs the runner; returns its exit, report and peak RSS in MiB (ru_maxrss of the child). */
async function run(file: string, ...args: string[]) {
  const report = join(dir, 'report.json');
  rmSync(report, { force: true });
  const wrapper =
    'import resource, subprocess, sys\nr = subprocess.run(sys.argv[1:])\nprint(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)';
  const r = await execa('python3', ['-c', wrapper, runner, 'run', file, '--device', 'cpu', '--report', report, ...args], {
    reject: false,
    env: { ASAN_OPTIONS: 'allocator_may_return_null=1:exitcode=86', UBSAN_OPTIONS: 'halt_on_error=1:exitcode=87' },
  });
  const [exit, rssKiB] = r.stdout.trim().split(/\s+/).map(Number);
  let doc: { errors: { code: string; location: string; message: string }[]; exit_code: number; program: { methods: string[] } } | null;
  try {
    doc = JSON.parse((await import('node:fs')).readFileSync(report, 'utf8'));
  } catch {
    doc = null;
  }
  return { exit, rssMiB: rssKiB / 1024, report: doc, stderr: r.stderr };
}

const checkCodes = async (file: string) => {
  const r = await runCli(['--quiet', 'check', '--json', file]);
  const doc = JSON.parse(r.stdout);
  return {
    exit: r.code,
    codes: doc.error
      ? [doc.error.code]
      : doc.diagnostics.filter((d: { severity: string }) => d.severity === 'error').map((d: { code: string }) => d.code),
  };
};

function soundBytes(): Uint8Array {
  const built = buildProgram(trtSingle());
  return encodePte(built.program, built.segments);
}

describe('verification: the runner verifies every program itself, in both modes', () => {
  it('a FlatBuffer offset of 0 is refused by the verifier before any accessor follows it, also under Minimal', async () => {
    const file = join(dir, 'offset-zero.pte');
    writeFileSync(file, SHAPES.find((s) => s.file === 'offset-zero')!.build());
    // Minimal has no verifier in ExecuTorch: its accessors would take the
    // offset's own bytes as the execution_plan vector, and this file would
    // "load" as a sound program with no method and report success. The
    // runner's own verifier runs first in either mode.
    for (const mode of ['internal', 'minimal']) {
      const r = await run(file, '--verification', mode);
      expect(r.exit, r.stderr).toBe(1);
      expect(r.report!.errors[0]).toMatchObject({ code: 'InvalidProgram', location: 'program' });
      expect(r.report!.errors[0].message).toMatch(/Verification failed; data may be truncated or corrupt.*trtx check: PTE_FLATBUFFER/);
    }
    expect((await checkCodes(file)).codes).toContain('PTE_FLATBUFFER');
  }, 60_000);
});

describe('the program part a header may claim', () => {
  it('a program over 2^31 - 1 bytes (the largest FlatBuffer) is refused before a byte of it is read', async () => {
    const bytes = soundBytes();
    const claim = 2n ** 31n + 64n;
    const view = new DataView(bytes.buffer);
    view.setBigUint64(16, claim, true); // extended header: program_size
    view.setBigUint64(24, claim, true); // segment_base_offset: the segments after it
    const file = join(dir, 'huge-program.pte');
    // A sparse file as large as the claim, so the runtime's own file-size check passes.
    const fd = openSync(file, 'w');
    writeSync(fd, bytes, 0, bytes.length, 0);
    writeSync(fd, new Uint8Array(1), 0, 1, Number(claim) + bytes.length);
    closeSync(fd);
    const r = await run(file);
    expect(r.exit, r.stderr).toBe(1);
    expect(r.report!.errors[0]).toMatchObject({ code: 'InvalidProgram', location: 'header.program_size' });
    expect(r.report!.errors[0].message).toMatch(/at most 2147483647.*nothing was read/);
    // Reading it would have cost the whole claim: 2 GiB.
    expect(r.rssMiB).toBeLessThan(512);
    expect((await checkCodes(file)).codes).toContain('PTE_PROGRAM_SIZE');
    rmSync(file);
  }, 120_000);

  it('a program larger than the file: the data loader refuses the read, and check refuses the header', async () => {
    const bytes = soundBytes();
    new DataView(bytes.buffer).setBigUint64(16, BigInt(bytes.length) * 4n, true);
    const file = join(dir, 'program-past-file.pte');
    writeFileSync(file, bytes);
    const r = await run(file);
    expect(r.exit).toBe(1);
    expect(r.report!.errors[0].code).toBe('InvalidArgument');
    // MmapDataLoader by default, FileDataLoader with --loader file: the same check, in its own words.
    expect(r.report!.errors[0].message).toMatch(/(mmap|file)_data_loader\.cpp.*> file_size_/);
    expect((await checkCodes(file)).codes).toContain('PTE_PROGRAM_SIZE');
  }, 60_000);
});

describe('planned host memory', () => {
  it('a 1 TiB arena in a 4 KiB program: PlannedMemoryLimit (exit 3, cannot run here) before ExecuTorch allocates it', async () => {
    const built = buildProgram(trtSingle());
    built.program.executionPlan[0].nonConstBufferSizes[1] = 1n << 40n;
    const file = join(dir, 'tebibyte-arena.pte');
    writeFileSync(file, encodePte(built.program, built.segments));
    const r = await run(file);
    expect(r.exit, r.stderr).toBe(3);
    expect(r.report!.errors[0]).toMatchObject({ code: 'PlannedMemoryLimit', location: 'forward arena 1' });
    expect(r.report!.errors[0].message).toMatch(/plan 1099511627\d+ bytes of host memory .* the limit is \d+ bytes/);
    expect(r.rssMiB).toBeLessThan(512);
    // A size is not a fault of the program: check passes it (an environment result, as verify says).
    expect((await checkCodes(file)).exit).toBe(0);
  }, 60_000);

  it('--max-planned-bytes: the sum of the chosen methods\u2019 host arenas against the limit (on the CPU every arena is host memory)', async () => {
    const file = join(dir, 'sound.pte');
    writeFileSync(file, soundBytes());
    const built = buildProgram(trtSingle());
    const need = built.program.executionPlan[0].nonConstBufferSizes.reduce((a, b) => a + b, 0n);
    expect((await run(file, '--max-planned-bytes', String(need))).exit).toBe(0);
    const under = await run(file, '--max-planned-bytes', String(need - 1n));
    expect(under.exit).toBe(3);
    expect(under.report!.errors[0].code).toBe('PlannedMemoryLimit');
  }, 60_000);
});
