// `trtx export` sniffs a model file's kind before Python starts, in the
// CLI's own process (src/export/model-kind.ts). A zip's data.pkl may be
// deflated, and deflate's ratio reaches 1032: before issue 43 the member was
// inflated whole, so a 1 MB .pt took 3.2 GB. Now the sniff reads the first
// PICKLE_LIMIT (16 MiB) bytes of a pickle however it is stored, inflating
// incrementally and dropping what comes past that. The archives are built
// here (fixtures/model-zip.ts); the memory is measured in a child process.
import { beforeAll, describe, expect, it } from 'vitest';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateBomb, deflatedMember, pickleNaming, storedMember, zipArchive, type ZipMember } from '../fixtures/model-zip.js';
import { inflatePrefix, modelKind, PICKLE_LIMIT } from '../src/export/model-kind.js';
import { runCli } from './helpers/cli.js';
import { runChild } from './helpers/child-cli.js';
import { DOUBLE_PYTHON } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('export-model-bomb');
const MiB = 1024 * 1024;
const STOP = Buffer.from('.');

function archive(file: string, member: ZipMember): string {
  const path = join(dir, file);
  writeFileSync(path, zipArchive([member]));
  return path;
}

const sniff = (path: string) => modelKind(path, statSync(path).size);

describe('inflating a data.pkl stops at the sniff\u2019s ceiling', () => {
  it('a member that inflates to 1 GiB gives its first PICKLE_LIMIT bytes, as they are', async () => {
    const head = pickleNaming('mymodel.Net');
    const bomb = deflateBomb('model/data.pkl', head, 1024, STOP);
    expect(bomb.stored.length).toBeLessThan(1.1 * MiB);
    const read = (offset: number, length: number) => Promise.resolve(bomb.stored.subarray(offset, offset + length));
    const prefix = await inflatePrefix(read, 0, bomb.stored.length, PICKLE_LIMIT);
    expect(prefix?.length).toBe(PICKLE_LIMIT);
    expect(prefix!.subarray(0, head.length).equals(head)).toBe(true);
    expect(prefix!.subarray(head.length).every((b) => b === 0)).toBe(true);
  });

  it('a whole member below the ceiling inflates whole; a damaged one is no answer (the sniff says "pickle")', async () => {
    const data = pickleNaming('collections.OrderedDict', 'torch._utils._rebuild_tensor_v2');
    const m = deflatedMember('model/data.pkl', Buffer.concat([data, STOP]));
    const read = (bytes: Buffer) => (offset: number, length: number) => Promise.resolve(bytes.subarray(offset, offset + length));
    expect((await inflatePrefix(read(m.stored), 0, m.stored.length, PICKLE_LIMIT))?.equals(Buffer.concat([data, STOP]))).toBe(true);
    const cut = m.stored.subarray(0, m.stored.length - 4);
    expect(await inflatePrefix(read(cut), 0, cut.length, PICKLE_LIMIT)).toBeNull();
    const damaged = Buffer.from(m.stored);
    damaged[0] = 0xff; // block type 3: reserved
    expect(await inflatePrefix(read(damaged), 0, damaged.length, PICKLE_LIMIT)).toBeNull();
    expect((await sniff(archive('damaged.pt', { ...m, stored: damaged }))).kind).toBe('pickle');
    expect((await sniff(archive('sound.pt', m))).kind).toBe('state_dict');
  });

  it('a deflated data.pkl is read as far as a stored one: a class past the first 16 MiB is not seen in either', async () => {
    const head = pickleNaming('collections.OrderedDict');
    const tail = Buffer.concat([pickleNaming('mymodel.Net'), STOP]);
    const bomb = deflateBomb('model/data.pkl', head, 24, tail);
    const whole = Buffer.concat([head, Buffer.alloc(24 * MiB), tail]);
    const deflated = await sniff(archive('late-class-deflated.pt', bomb));
    const stored = await sniff(archive('late-class-stored.pt', storedMember('model/data.pkl', whole)));
    expect(deflated).toEqual({ kind: 'pickle', classes: [], weightBytes: null });
    expect(stored).toEqual(deflated);
    // Before the ceiling, the class makes it a module, stored or deflated.
    const early = Buffer.concat([pickleNaming('collections.OrderedDict', 'mymodel.Net'), Buffer.alloc(24 * MiB), STOP]);
    for (const member of [storedMember('model/data.pkl', early), deflatedMember('model/data.pkl', early)])
      expect(await sniff(archive(`early-class-${member.method}.pt`, member))).toEqual({
        kind: 'module',
        classes: ['mymodel.Net'],
        weightBytes: null,
      });
  });
});

describe('trtx export on a deflate bomb, memory measured in the child', () => {
  let floorMiB = 0;
  let module: string;
  beforeAll(async () => {
    // The same refusal on a small file: node, the CLI and the sniff with nothing to inflate.
    const small = archive('module-small.pt', deflatedMember('model/data.pkl', Buffer.concat([pickleNaming('mymodel.Net'), STOP])));
    const r = await runChild(['export', small, '-o', join(dir, 'small.pte'), '--python', DOUBLE_PYTHON]);
    expect(r.stderr).toMatch(/EXPORT_MODEL_PICKLE/);
    floorMiB = r.maxRssMiB;
    module = archive('module-bomb.pt', deflateBomb('model/data.pkl', pickleNaming('mymodel.Net'), 1024, STOP));
  }, 120_000);

  it('1 MB that inflates to 1 GiB: refused as the pickled module it is, within 64 MiB of the floor', { timeout: 120_000 }, async () => {
    const r = await runChild(['export', module, '-o', join(dir, 'bomb.pte'), '--python', DOUBLE_PYTHON]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/^error: EXPORT_MODEL_PICKLE: .*naming mymodel\.Net/m);
    expect(Number.isFinite(r.maxRssMiB)).toBe(true);
    expect(r.maxRssMiB - floorMiB).toBeLessThan(64);
  });
});

describe('the classes a module pickle names, in the refusal', () => {
  it('a class name of 100 KB is shown shortened, with its length and a hash', async () => {
    const long = `m${'o'.repeat(100_000)}`;
    const path = archive('long-class.pt', deflatedMember('model/data.pkl', Buffer.concat([pickleNaming(`${long}.Net`), STOP])));
    const r = await runCli(['export', path, '-o', join(dir, 'long.pte'), '--python', DOUBLE_PYTHON]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/EXPORT_MODEL_PICKLE: .*naming mo{199}…\(100005 bytes, #[0-9a-f]{8}\)/);
    expect(r.stderr.length).toBeLessThan(2000);
  });
});
