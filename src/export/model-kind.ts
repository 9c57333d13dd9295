// What kind of model file `trtx export` was given, read from its bytes in
// TypeScript before any Python starts, so a file export cannot take is named
// in milliseconds rather than after torch has imported. Nothing here
// unpickles anything: only the zip central directory, and the opcodes of a
// pickle are looked at.
//
//   exported_program  torch.export.save: a PT2 archive (`archive_format` is
//                     "pt2", models/*.json) or the older flat zip with
//                     serialized_exported_program.json
//   torchscript       torch.jit.save: constants.pkl or a code/ folder
//   module            torch.save(model): a pickle naming the module's class
//   state_dict        torch.save(model.state_dict()) (or a checkpoint dict of
//                     them): a pickle of tensors in (Ordered)dicts, no class
//   pickle            another pickle: the bridge decides (--allow-pickle)
//   aoti_package      a PT2 archive without an ExportedProgram
//   program           an ExecuTorch program (.pte)
//   unknown           anything else
// The same layouts python-bridge/trtx_bridge/sniff.py reads; torch's zip
// writer (torch/serialization.py, caffe2's PyTorchStreamWriter) stores every
// record uncompressed under one top-level folder named after the file.

import { open } from 'node:fs/promises';
import { createInflateRaw } from 'node:zlib';
import {
  EOCD_SEARCH,
  LOCAL_HEADER_SIZE,
  localDataStart,
  readCentralDirectory,
  readZip64End,
  readZipEnd,
  ZIP64_END_SIZE,
  type ZipDirectoryEntry,
} from '../util/zip-format.js';
import { pickleGlobals } from './pickle-globals.js';

export type ModelKind = 'exported_program' | 'torchscript' | 'module' | 'state_dict' | 'pickle' | 'aoti_package' | 'program' | 'unknown';

/**
 * Pickle bytes looked at, at most: the first 16 MiB of the pickle, however it
 * is stored (a raw file, a stored or a deflated zip member). A state dict's
 * data.pkl is kilobytes; a module's names its classes in its first bytes
 * and is rarely more than a few MiB.
 */
export const PICKLE_LIMIT = 16 * 1024 * 1024;
/**
 * Compressed bytes read, at most, to inflate a member's first `limit` bytes:
 * deflate never needs more than 5 bytes per 64 KiB block above its output
 * (stored blocks); past this the stream is mostly empty blocks, and what it
 * gave so far is its prefix.
 */
const compressedLimit = (limit: number) => limit + 1024 * 1024;
/**
 * Compressed bytes fed to zlib at a time. The ceiling is checked between
 * chunks; output past it is dropped as it comes, so what one chunk inflates
 * to past the ceiling (at most 1032 times the chunk, deflate's largest
 * ratio) costs time, never memory.
 */
const INFLATE_CHUNK = 64 * 1024;

type Reader = (offset: number, length: number) => Promise<Buffer>;

/** The central directory of a zip (ZIP64 included; util/zip-format reads the records), or null when it cannot be found. */
async function zipEntries(read: Reader, size: number): Promise<ZipDirectoryEntry[] | null> {
  const end = readZipEnd(await read(Math.max(0, size - EOCD_SEARCH), Math.min(size, EOCD_SEARCH)));
  if (!end) return null;
  let { cdSize, cdOffset } = end;
  if (end.zip64 && end.zip64EndOffset !== null) {
    const zip64 = readZip64End(await read(end.zip64EndOffset, ZIP64_END_SIZE));
    if (!zip64) return null;
    ({ cdSize, cdOffset } = zip64);
  }
  if (cdOffset + cdSize > size || cdSize > 64 * 1024 * 1024) return null;
  return readCentralDirectory(await read(cdOffset, cdSize));
}

/**
 * The first `limit` bytes a raw deflate stream of `compressed` bytes at
 * `start` inflates to, fed to zlib INFLATE_CHUNK at a time: output past
 * `limit` is dropped as it comes and no more input is read once it is
 * reached, so a member that inflates to gigabytes (a deflate bomb: 1 MB of
 * zeros' deflate is 1 GB) costs `limit` bytes and one chunk's inflating.
 * Null when the stream is not deflate.
 */
export async function inflatePrefix(read: Reader, start: number, compressed: number, limit: number): Promise<Buffer | null> {
  const inflate = createInflateRaw();
  const kept: Buffer[] = [];
  let seen = 0;
  inflate.on('data', (piece: Buffer) => {
    if (seen < limit) kept.push(piece.subarray(0, limit - seen));
    seen += piece.length;
  });
  // zlib's refusal of the data destroys the stream: the write in flight never calls back, so each wait races it.
  const failed = new Promise<never>((_, reject) => inflate.once('error', reject));
  failed.catch(() => {});
  const toRead = Math.min(compressed, compressedLimit(limit));
  try {
    let fed = 0;
    while (fed < toRead && seen <= limit) {
      const asked = Math.min(INFLATE_CHUNK, toRead - fed);
      const chunk = await read(start + fed, asked);
      if (chunk.length < asked) return null; // the file ends inside the member: a damaged archive
      await Promise.race([new Promise<void>((resolve, reject) => inflate.write(chunk, (e) => (e ? reject(e) : resolve()))), failed]);
      fed += chunk.length;
    }
    if (fed === compressed && seen <= limit) {
      // All of it was fed below the ceiling: what zlib still holds, and whether the stream was whole.
      const ended = new Promise<void>((resolve) => inflate.once('end', resolve));
      inflate.end();
      await Promise.race([ended, failed]);
    }
    return Buffer.concat(kept);
  } catch {
    return null;
  } finally {
    inflate.destroy();
  }
}

/** A zip member's first `limit` bytes (stored or deflated), or null when it cannot be read as either. */
async function entryPrefix(read: Reader, e: ZipDirectoryEntry, limit: number): Promise<Buffer | null> {
  const start = localDataStart(await read(e.localOffset, LOCAL_HEADER_SIZE), e.localOffset);
  if (start === null) return null;
  if (e.method === 0) return read(start, Math.min(e.compressedSize, limit));
  if (e.method !== 8) return null;
  return inflatePrefix(read, start, e.compressedSize, limit);
}

// Globals a pickle of tensors names: containers, torch's tensor and storage
// rebuilders (torch/_utils.py, torch/storage.py), dtypes and devices. Any
// other class it names is code the pickle runs: a module (or an object of
// the user's) that only unpickling, with --allow-pickle, can load.
const DATA_GLOBAL = [
  /^collections\.(OrderedDict|defaultdict)$/,
  /^torch\._utils\._rebuild_\w+$/,
  /^torch\.(\w+Storage|storage\.\w+|device|Size|float\w*|bfloat16|u?int\d+|bool|complex\w*|Tensor)$/,
  /^torch\._tensor\._rebuild_from_type_v2$/,
  /^torch\.nn\.parameter\.Parameter$/,
  /^_?_?builtins?_?_?\.(set|frozenset|tuple|list|dict|slice|bytearray|complex)$/,
  /^_codecs\.encode$/,
  /^numpy\.(core\.multiarray\._reconstruct|dtype|ndarray|core\.multiarray\.scalar)$/,
];
const TENSOR_GLOBAL = /^torch\._utils\._rebuild_(tensor\w*|parameter\w*)$/;

/** module, state_dict or pickle, from what the pickle names. */
export function pickleKind(bytes: Buffer): { kind: 'module' | 'state_dict' | 'pickle'; classes: string[] } {
  const globals = pickleGlobals(bytes);
  const classes = globals.filter((g) => !DATA_GLOBAL.some((r) => r.test(g)));
  if (classes.length) return { kind: 'module', classes };
  return { kind: globals.some((g) => TENSOR_GLOBAL.test(g)) ? 'state_dict' : 'pickle', classes: [] };
}

const relative = (name: string) => {
  const slash = name.indexOf('/');
  return slash < 0 ? name : name.slice(slash + 1);
};

/**
 * The bytes of the tensors an exported program archive stores: torch.export.save's
 * PT2 layout keeps each parameter, buffer and constant as a record of its own
 * under `data/weights/` and `data/constants/` (torch/export/pt2_archive/_package.py;
 * their `*_config.json` records are metadata), the older flat zip its state dict and
 * constants in `serialized_state_dict.pt` and `serialized_constants.pt`. Sizes come
 * from the central directory: nothing is read. This is what `trtx export`
 * must hold in memory at least once (src/export/memory-need.ts).
 */
export function archiveWeightBytes(entries: readonly ZipDirectoryEntry[]): number {
  let total = 0;
  for (const e of entries) {
    const name = relative(e.name);
    const tensor = /^data\/(weights|constants)\//.test(name) && !name.endsWith('.json');
    if (tensor || name === 'serialized_state_dict.pt' || name === 'serialized_constants.pt') total += e.size;
  }
  return total;
}

export interface ModelKindResult {
  kind: ModelKind;
  classes: string[];
  /** An exported program archive's tensor bytes (archiveWeightBytes); null for other kinds. */
  weightBytes: number | null;
}

/** The kind of the model file at `path` (`size` bytes), with the classes a module pickle names. */
export async function modelKind(path: string, size: number): Promise<ModelKindResult> {
  const fh = await open(path, 'r');
  try {
    const read: Reader = async (offset, length) => {
      const b = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
      if (b.length) await fh.read(b, 0, b.length, offset);
      return b;
    };
    const head = await read(0, 8);
    const none = { classes: [] as string[], weightBytes: null };
    if (head.subarray(4, 8).toString('latin1') === 'ET12') return { kind: 'program', ...none };
    if (head[0] === 0x80 && (head[1] ?? 0) >= 2 && (head[1] ?? 0) <= 5)
      return { ...pickleKind(await read(0, PICKLE_LIMIT)), weightBytes: null };
    if (head.subarray(0, 2).toString('latin1') !== 'PK') return { kind: 'unknown', ...none };
    const entries = await zipEntries(read, size);
    if (!entries) return { kind: 'unknown', ...none };
    const names = entries.map((e) => relative(e.name));
    const formatEntry = entries[names.indexOf('archive_format')];
    if (formatEntry) {
      const format = await entryPrefix(read, formatEntry, 64);
      if (format?.toString('latin1').trim() === 'pt2') {
        const program = names.some((n) => n.startsWith('models/') && n.endsWith('.json'));
        return program
          ? { kind: 'exported_program', classes: [], weightBytes: archiveWeightBytes(entries) }
          : { kind: 'aoti_package', ...none };
      }
    }
    if (names.includes('serialized_exported_program.json'))
      return { kind: 'exported_program', classes: [], weightBytes: archiveWeightBytes(entries) };
    if (names.includes('constants.pkl') || names.some((n) => n.startsWith('code/'))) return { kind: 'torchscript', ...none };
    const data = entries[names.indexOf('data.pkl')];
    if (data) {
      const bytes = await entryPrefix(read, data, PICKLE_LIMIT);
      return bytes ? { ...pickleKind(bytes), weightBytes: null } : { kind: 'pickle', ...none };
    }
    return { kind: 'unknown', ...none };
  } finally {
    await fh.close();
  }
}
