// A .pte cut short (an interrupted copy or download) is refused by every
// command as PTE_TRUNCATED, exit 1, naming the size the file should have
// (what its header, or an older header's segment table, says) and the size it
// has, with a hint about an incomplete copy; never as the field that first
// runs past the end (PTE_SEGMENT_DATA_SIZE, PTE_SEGMENT_BASE, PTE_SEGMENT_EXTENT).
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/catalogue.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('pte-truncated');
const whole = join(dir, 'whole.pte');
let bytes: Buffer;
let segmentBase = 0;

beforeAll(async () => {
  await writeFixture(whole, kvDecoder());
  bytes = readFileSync(whole);
  segmentBase = Number(bytes.readBigUInt64LE(24));
});

/** The program's first `size` bytes, as an interrupted copy leaves them; `edit` changes the head first. */
function cut(name: string, size: number, edit?: (b: Buffer) => void): string {
  const b = Buffer.from(bytes);
  edit?.(b);
  const path = join(dir, name);
  writeFileSync(path, b.subarray(0, size));
  return path;
}

const COMMANDS = [['inspect'], ['check'], ['verify'], ['rewrite', '-o', join(dir, 'out.pte')]];
const env = { TRTX_RUNNER_BIN: '/nonexistent/never-started' };

describe.concurrent('a program cut short', () => {
  it.each(COMMANDS)('%s: PTE_TRUNCATED, exit 1, both sizes and what to do', async (...args) => {
    const [command, ...rest] = args;
    const file = cut(`${command}-in-segments.pte`, bytes.length - 1000);
    const r = await runCli([command, file, ...rest], { env });
    expect(r.code, r.output).toBe(1);
    const text = r.output;
    expect(text).toMatch(/PTE_TRUNCATED/);
    expect(text).toContain(`the file is ${bytes.length - 1000} bytes`);
    expect(text).toContain(`says it is ${bytes.length} bytes`);
    expect(text).toMatch(/the last 1000 bytes are missing/);
    expect(text).toMatch(/hint: the file is incomplete \(an interrupted copy or download.*copy or download it again/);
    expect(text).not.toMatch(/PTE_SEGMENT_DATA_SIZE|PTE_SEGMENT_EXTENT|PTE_SEGMENT_BASE/);
  });

  it('cut inside the program, before the segments: the same refusal', async () => {
    const r = await runCli(['inspect', cut('in-program.pte', segmentBase - 100)]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /^error: PTE_TRUNCATED: header\.extended: the file is \d+ bytes \(.*\), but its header \(a \d+-byte program, segments from byte \d+, then \d+ bytes of segment data\) says it is \d+ bytes/,
    );
  });

  it('an older header without a segment data size: the segment table says where the file ends', async () => {
    // A 24-byte extended header (ExecuTorch's before segment_data_size): bytes 32..39 are padding then.
    const older = cut('older-header.pte', bytes.length - 10, (b) => b.writeUInt32LE(24, 12));
    const r = await runCli(['inspect', older]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /^error: PTE_TRUNCATED: program\.segments: the file is \d+ bytes .* but its segment table .* says it is \d+ bytes/,
    );
    expect(r.stderr).toMatch(/^hint: the file is incomplete/m);
  });

  it('--json: the error document carries the code, the sizes and the hint', async () => {
    const r = await runCli(['check', '--json', cut('json.pte', bytes.length - 1)]);
    expect(r.code).toBe(1);
    const d = (JSON.parse(r.stdout) as { diagnostics: { code: string; message: string; hint: string }[] }).diagnostics[0];
    expect(d.code).toBe('PTE_TRUNCATED');
    expect(d.message).toMatch(/the last 1 byte is missing$/);
    expect(d.hint).toContain(`the whole file is ${bytes.length} bytes`);
  });
});
