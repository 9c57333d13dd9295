// `trtx export` says before Python starts when a model will not fit in this
// machine's memory (issue 36): an archive's weights are read off its zip
// central directory, the need is 2.5x them + 2 GiB, and what is available is
// MemAvailable (and a cgroup's limit). The archives here declare their
// sizes only: a PT2 layout whose weight records claim 4 GB each, so the
// file stays a few hundred bytes.
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from './helpers/cli.js';
import { DOUBLE_PYTHON } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';
import { availableMemory, cgroupMemoryLeft, exportMemoryNeed, readText, refuseShortMemory } from '../src/export/memory-need.js';
import { archiveWeightBytes } from '../src/export/model-kind.js';
import type { ZipDirectoryEntry } from '../src/util/zip-format.js';

const dir = tempDir('export-memory');
const GB4 = 4_000_000_000;

/**
 * A stored (uncompressed) zip of `entries`, each holding its bytes but
 * declaring `declared` as its size in the central directory (what a reader
 * of sizes sees), in torch.export.save's PT2 layout under one folder.
 */
function pt2Archive(entries: { name: string; data: string; declared?: number }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(`model/${e.name}`);
    const data = Buffer.from(e.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(e.declared ?? data.length, 20);
    central.writeUInt32LE(e.declared ?? data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** A PT2 archive whose weight records declare `n` x 4 GB. */
function hugeArchive(file: string, n: number): string {
  const weights = Array.from({ length: n }, (_, i) => ({ name: `data/weights/weight_${i}`, data: 'x', declared: GB4 }));
  const path = join(dir, file);
  writeFileSync(
    path,
    pt2Archive([
      { name: 'archive_format', data: 'pt2' },
      { name: 'models/model.json', data: '{}' },
      { name: 'data/weights/model_weights_config.json', data: '{}', declared: GB4 },
      ...weights,
    ]),
  );
  return path;
}

const entry = (name: string, size: number): ZipDirectoryEntry => ({
  name,
  flags: 0,
  method: 0,
  compressedSize: size,
  size,
  localOffset: 0,
  external: 0,
});

describe('the memory an export needs', () => {
  it('counts the tensors of an archive, not its metadata', () => {
    const entries = [
      entry('m/data/weights/weight_0', 1000),
      entry('m/data/weights/model_weights_config.json', 50),
      entry('m/data/constants/tensor_0', 24),
      entry('m/data/sample_inputs/model.pt', 9000),
      entry('m/models/model.json', 7000),
    ];
    expect(archiveWeightBytes(entries)).toBe(1024);
    // The older flat layout keeps them in two pickles.
    expect(
      archiveWeightBytes([
        entry('serialized_state_dict.pt', 10),
        entry('serialized_constants.pt', 5),
        entry('serialized_exported_program.json', 99),
      ]),
    ).toBe(15);
  });

  it('is 2.5x the weights + 2 GiB, against MemAvailable and a cgroup limit, whichever is less', () => {
    expect(exportMemoryNeed(4 * 1024 ** 3)).toBe(12 * 1024 ** 3);
    const meminfo = 'MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n';
    expect(availableMemory((p) => (p === '/proc/meminfo' ? meminfo : null))).toBe(20000000 * 1024);
    const files: Record<string, string> = {
      '/proc/meminfo': meminfo,
      '/sys/fs/cgroup/memory.max': '8589934592\n',
      '/sys/fs/cgroup/memory.current': '1073741824\n',
    };
    expect(availableMemory((p) => files[p] ?? null)).toBe(7 * 1024 ** 3);
    files['/sys/fs/cgroup/memory.max'] = 'max\n';
    expect(availableMemory((p) => files[p] ?? null)).toBe(20000000 * 1024);
    expect(availableMemory(() => null)).toBeNull();
  });

  it('reads cgroup v1 as well as v2: the least any group from its own up to the root leaves; v1\u2019s huge value is no limit', () => {
    // A fake /sys/fs/cgroup: v1's memory controller with the process in /job/step, under a limited /job.
    const root = tempDir('cgroup-v1');
    const group = (dir: string, files: Record<string, string>) => {
      mkdirSync(join(root, dir), { recursive: true });
      for (const [name, text] of Object.entries(files)) writeFileSync(join(root, dir, name), text);
    };
    const UNLIMITED = '9223372036854771712\n';
    group('memory', { 'memory.limit_in_bytes': UNLIMITED, 'memory.usage_in_bytes': '50000000000\n' });
    group('memory/job', { 'memory.limit_in_bytes': `${6 * 1024 ** 3}\n`, 'memory.usage_in_bytes': `${1024 ** 3}\n` });
    group('memory/job/step', { 'memory.limit_in_bytes': UNLIMITED, 'memory.usage_in_bytes': `${512 * 1024 ** 2}\n` });
    const meminfo = 'MemAvailable:   20000000 kB\n';
    const proc: Record<string, string> = { '/proc/meminfo': meminfo, '/proc/self/cgroup': '5:cpu:/\n4:memory:/job/step\n0::/\n' };
    const read = (p: string) => proc[p] ?? readText(p);
    expect(cgroupMemoryLeft(read, root)).toBe(5 * 1024 ** 3);
    expect(availableMemory(read, root)).toBe(5 * 1024 ** 3);
    // A v1 group alone, at the mount's root (a container with its own namespace).
    proc['/proc/self/cgroup'] = '4:memory:/\n';
    writeFileSync(join(root, 'memory', 'memory.limit_in_bytes'), `${3 * 1024 ** 3}\n`);
    expect(availableMemory(read, root)).toBe(0); // its usage is past its limit
    writeFileSync(join(root, 'memory', 'memory.usage_in_bytes'), `${1024 ** 3}\n`);
    expect(availableMemory(read, root)).toBe(2 * 1024 ** 3);
    // Unlimited everywhere: MemAvailable decides.
    writeFileSync(join(root, 'memory', 'memory.limit_in_bytes'), UNLIMITED);
    expect(cgroupMemoryLeft(read, root)).toBeNull();
    expect(availableMemory(read, root)).toBe(20000000 * 1024);
    // v2 and v1 both mounted (hybrid): the smaller.
    group('', { 'memory.max': `${4 * 1024 ** 3}\n`, 'memory.current': '0\n' });
    writeFileSync(join(root, 'memory', 'memory.limit_in_bytes'), `${1024 ** 3}\n`);
    writeFileSync(join(root, 'memory', 'memory.usage_in_bytes'), '0\n');
    expect(cgroupMemoryLeft(read, root)).toBe(1024 ** 3);
  });

  it('refuses an export a cgroup v1 limit cannot hold, before Python', () => {
    const root = tempDir('cgroup-v1-refuse');
    mkdirSync(join(root, 'memory'));
    writeFileSync(join(root, 'memory', 'memory.limit_in_bytes'), `${4 * 1024 ** 3}\n`);
    writeFileSync(join(root, 'memory', 'memory.usage_in_bytes'), '0\n');
    const read = (p: string) =>
      p === '/proc/meminfo' ? 'MemAvailable:   200000000 kB\n' : p === '/proc/self/cgroup' ? '4:memory:/\n' : readText(p);
    expect(() => refuseShortMemory('m.pt2', 2 * 1024 ** 3, availableMemory(read, root))).toThrow(/this machine has 4 GiB available/);
  });

  it('refuses only what does not fit, and says how much it needs and has', () => {
    expect(() => refuseShortMemory('m.pt2', 4 * 1024 ** 3, 12 * 1024 ** 3)).not.toThrow();
    expect(() => refuseShortMemory('m.pt2', null, 1)).not.toThrow();
    expect(() => refuseShortMemory('m.pt2', 4 * 1024 ** 3, 12 * 1024 ** 3 - 1)).toThrow(
      /EXPORT_MEMORY|needs about 12 GiB of memory \(2\.5 x its 4 GiB of weights \+ 2 GiB\); this machine has 12 GiB available/,
    );
  });
});

describe('trtx export of a model larger than this machine can export', () => {
  it('stops before Python starts with EXPORT_MEMORY (exit 2), the need and what is available, and writes nothing', async () => {
    // 100 x 4 GB = 400 GB of declared weights: about 1 TB needed.
    const model = hugeArchive('huge.pt2', 100);
    const calls = join(dir, 'huge.calls.jsonl');
    const out = join(dir, 'huge.pte');
    const r = await runCli(['export', model, '-o', out, '--engine', 'reference', '--python', DOUBLE_PYTHON], {
      env: { TRTX_DOUBLE_CALLS: calls },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^error: EXPORT_MEMORY: .*huge\.pt2: exporting this model needs about [\d.]+ [GT]iB of memory \(2\.5 x its 372\.53 GiB of weights \+ 2 GiB\); this machine has [\d.]+ [KMGT]i?B available/m,
    );
    expect(r.stderr).toMatch(/^hint: .*--no-memory-check/m);
    expect(existsSync(calls)).toBe(false);
    expect(existsSync(out)).toBe(false);
  });

  it('--no-memory-check goes on to Python', async () => {
    const model = hugeArchive('huge-anyway.pt2', 100);
    const r = await runCli([
      'export',
      model,
      '-o',
      join(dir, 'anyway.pte'),
      '--engine',
      'reference',
      '--no-memory-check',
      '--python',
      DOUBLE_PYTHON,
    ]);
    expect(r.stderr).not.toMatch(/EXPORT_MEMORY/);
    // The bridge started and read the file (the double then refuses its made-up bytes).
    expect(r.stderr).toMatch(/load \d+%: reading huge-anyway\.pt2/);
  });
});
