// A real-size program as a small skeleton and a recipe, for the GPU machine
// (it takes 64 MiB of files and cannot export): every named-data weight whose
// bytes are hash_fill.py's values for its name is left out and written again
// there by inflate.py; every other byte travels in SKELETON. The recipe holds
// the file's size and sha256, which inflate.py checks: the program run there
// is byte for byte the one exported here.
//
//   npx tsx bench/real-size/skeleton.ts PROGRAM.pte OUT_DIR   (writes NAME.skeleton, NAME.recipe.json)
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { openPte } from '../../src/pte/open.js';

const CHUNK = 1 << 24;

/** hash_fill.values: element i of the tensor with `seed`, as float32 (uint32 arithmetic as numpy wraps it). */
function fill(seed: number, start: number, count: number): Float32Array {
  const out = new Float32Array(count);
  const s = Math.imul(seed, 0x85ebca77) >>> 0;
  for (let k = 0; k < count; k++) {
    let h = (Math.imul(start + k, 0x9e3779b1) + s) >>> 0;
    h = (h ^ (h >>> 15)) >>> 0;
    h = Math.imul(h, 0x2c1b3c6d) >>> 0;
    h = (h ^ (h >>> 12)) >>> 0;
    out[k] = ((h >>> 24) - 128) * 2 ** -13;
  }
  return out;
}

function encode(v: Float32Array, dtype: 'float32' | 'bfloat16'): Buffer {
  const f32 = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (dtype === 'float32') return f32;
  const out = Buffer.alloc(v.length * 2);
  for (let k = 0; k < v.length; k++) out.writeUInt16LE(f32.readUInt32LE(4 * k) >>> 16, 2 * k);
  return out;
}

const names = (key: string) => [key, `model.${key}`, key.replace(/^model\./, ''), key.replace(/^model\.model\./, '')];

/** The seed and dtype whose fill gives `head` (the entry's first bytes), or null. */
function recipeOf(key: string, head: Buffer): { seed: number; dtype: 'float32' | 'bfloat16' } | null {
  for (const name of names(key)) {
    const seed = crc32(name) >>> 0;
    for (const dtype of ['float32', 'bfloat16'] as const) {
      const n = Math.floor(head.length / (dtype === 'float32' ? 4 : 2));
      if (n > 0 && encode(fill(seed, 0, n), dtype).equals(head.subarray(0, n * (dtype === 'float32' ? 4 : 2)))) return { seed, dtype };
    }
  }
  return null;
}

const [program, outDir] = process.argv.slice(2);
if (!program || !outDir) throw new Error('usage: skeleton.ts PROGRAM.pte OUT_DIR');
const pte = await openPte(program);
const fd = openSync(program, 'r');
const read = (offset: number, length: number) => {
  const b = Buffer.alloc(length);
  readSync(fd, b, 0, length, offset);
  return b;
};
const fills: { offset: number; size: number; key: string; seed: number; dtype: string }[] = [];
for (const n of pte.program.namedData) {
  const seg = pte.segments[n.segmentIndex];
  if (!seg || seg.size < 1024) continue;
  const r = recipeOf(n.key ?? '', read(seg.offset, 256));
  if (!r) continue;
  // The whole entry, not only its head: a recipe that does not reproduce every byte is no recipe.
  const width = r.dtype === 'float32' ? 4 : 2;
  for (let at = 0; at < seg.size; at += CHUNK * width) {
    const len = Math.min(CHUNK * width, seg.size - at);
    if (!encode(fill(r.seed, at / width, len / width), r.dtype).equals(read(seg.offset + at, len)))
      throw new Error(`${n.key}: the fill differs at byte ${at}`);
  }
  fills.push({ offset: seg.offset, size: seg.size, key: n.key ?? '', ...r });
}
fills.sort((a, b) => a.offset - b.offset);
const name = basename(program, '.pte');
const hash = createHash('sha256');
const kept: Buffer[] = [];
let at = 0;
for (const f of [...fills, { offset: pte.fileSize, size: 0 }]) {
  for (let o = at; o < f.offset; o += CHUNK) kept.push(read(o, Math.min(CHUNK, f.offset - o)));
  at = f.offset + f.size;
}
for (let o = 0; o < pte.fileSize; o += 64 * CHUNK) hash.update(read(o, Math.min(64 * CHUNK, pte.fileSize - o)));
closeSync(fd);
await pte.close();
writeFileSync(join(outDir, `${name}.skeleton`), Buffer.concat(kept));
writeFileSync(join(outDir, `${name}.recipe.json`), JSON.stringify({ size: pte.fileSize, sha256: hash.digest('hex'), fills }, null, 1));
const filled = fills.reduce((s, f) => s + f.size, 0);
console.log(
  `${name}: ${fills.length} weights (${(filled / 1e9).toFixed(2)} GB) left to the recipe, skeleton ${(pte.fileSize - filled) / 1e6} MB`,
);
