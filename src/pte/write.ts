// Writing a `.pte`: re-encode the program, lay segments out aligned, stream
// segment bytes from their source files, and publish atomically. The target
// is only ever replaced by a complete, fsynced file: the bytes go to a
// temporary file beside it, which is renamed over the target at the end.
// Any failure (or an abort) removes the temporary file and leaves the target
// as it was.
//
// A source file may change while it is copied (another program written
// over it, a truncation). Every source is copied from an open descriptor
// (the one the program was read through, when the caller has it: a path
// replaced meanwhile does not matter), and its identity (which file, size,
// last change: src/util/file-io.ts) is compared before the copy, while the
// kernel copies it, and before the rename: a source that changed is refused
// (WRITE_SOURCE_TRUNCATED when it shrank, WRITE_SOURCE_CHANGED otherwise)
// and nothing is published. Every copy loop is bounded by the size it was
// asked for: a read that ends early is a refusal, never a retry.

import { open, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { trackPath } from '../util/cleanup.js';
import { TrtxError } from '../util/errors.js';
import { itemAt } from '../util/present.js';
import { encodeProgram } from './encode.js';
import { EXTENDED_HEADER_LENGTH, headWithExtendedHeader } from './header.js';
import { identityOf, syncDir, verifyUnchanged, writeAllAt, type OpenedFile } from '../util/file-io.js';
import { kernelCopy } from '../util/kernel-copy.js';
import { spaceShortfall, type FreeSpaceReader } from '../util/free-space.js';
import { fileRefusal, tempPath } from '../util/target.js';
import type { Program } from './model.js';

/**
 * Where a segment's bytes come from. A file source with `opened` is copied
 * from that descriptor and must still have that identity (the file the
 * program was read from); without it the writer opens `path` itself.
 */
export type SegmentSource =
  { kind: 'file'; path: string; offset: number; size: number; opened?: OpenedFile } | { kind: 'bytes'; bytes: Uint8Array };

/** Test hooks: a step at which a test changes a source deterministically. */
export interface WriteHooks {
  /** After each chunk the writer copied from a source file, and after the kernel's copy of the whole file. */
  afterCopy?: (bytes: number) => void | Promise<void>;
}

export interface WriteOptions {
  /** Segment alignment (a power of two); default 4096. */
  alignment?: number;
  /** Write the extended header even with no segment data (default: only when needed). */
  extendedHeader?: boolean;
  onProgress?: (written: number, total: number) => void;
  signal?: AbortSignal;
  /**
   * The program already encoded with the segment table it had then: used as
   * is when the layout gives the same table, so a write that follows a
   * failed in-place attempt does not encode the program again (issue 28).
   */
  encoded?: EncodedProgram;
  hooks?: WriteHooks;
  /** How the target's folder reports its free space (default statfs(2); a test states a small disk). */
  freeSpace?: FreeSpaceReader;
}

/** A program's FlatBuffer and the segment table it was encoded with. */
export interface EncodedProgram {
  segments: Program['segments'];
  bytes: Uint8Array;
}

/** Whether two segment tables are the same offsets and sizes. */
export function sameSegments(a: Program['segments'], b: Program['segments']): boolean {
  return a.length === b.length && a.every((s, i) => s.offset === b[i]?.offset && s.size === b[i]?.size);
}

export interface WriteResult {
  path: string;
  fileSize: number;
  programSize: number;
  segmentBase: number;
  alignment: number;
}

const COPY_CHUNK = 16 * 1024 * 1024;

const alignUp = (n: number, a: number) => Math.ceil(n / a) * a;
const sourceSize = (s: SegmentSource) => (s.kind === 'file' ? s.size : s.bytes.length);

/**
 * The bytes before the first segment: program flatbuffer (with the extended
 * header inserted at byte 8 when wanted) and the segment layout. Mutates
 * `program.segments` to the new layout.
 */
export function layoutProgram(
  program: Program,
  sources: SegmentSource[],
  opts: { alignment: number; extendedHeader: boolean; encoded?: EncodedProgram },
) {
  const { alignment } = opts;
  if (alignment <= 0 || (alignment & (alignment - 1)) !== 0)
    throw new TrtxError('WRITE_ALIGNMENT', 'alignment', `${alignment} is not a power of two`);
  if (sources.length !== program.segments.length) {
    throw new TrtxError(
      'WRITE_SEGMENTS',
      'program.segments',
      `${program.segments.length} segments in the program but ${sources.length} sources`,
    );
  }
  let cursor = 0;
  const placed = sources.map((s) => {
    const at = alignUp(cursor, alignment);
    cursor = at + sourceSize(s);
    return { at, size: sourceSize(s) };
  });
  const relative = placed.map((p) => p.at);
  // Relative offsets depend only on sizes and alignment, so they can be set
  // before the program (whose size they would otherwise feed back into) is encoded.
  program.segments = placed.map((p) => ({ offset: BigInt(p.at), size: BigInt(p.size) }));
  const segmentDataSize = sources.length ? cursor : 0;
  const withHeader = opts.extendedHeader || segmentDataSize > 0;

  const reuse = opts.encoded !== undefined && sameSegments(opts.encoded.segments, program.segments);
  const fb = reuse && opts.encoded ? opts.encoded.bytes : encodeProgram(program);
  if (!withHeader) return { head: fb, programSize: fb.length, segmentBase: 0, relative, segmentDataSize };

  const programSize = fb.length + EXTENDED_HEADER_LENGTH;
  const segmentBase = segmentDataSize > 0 ? alignUp(programSize, alignment) : 0;
  const head = headWithExtendedHeader(fb, segmentBase, segmentDataSize, segmentBase);
  return { head, programSize, segmentBase, relative, segmentDataSize };
}

/** A source file held open, with the identity it must keep until the write is published. */
type SourceFile = OpenedFile & { path: string };

/** Refuses `src` when it is no longer what it was when it was opened. */
const verifySource = (src: SourceFile) => verifyUnchanged(src.path, src);

/**
 * Every file source with bytes to give, opened once: the caller's descriptor
 * when it passed one (refused if the file changed since), else opened here
 * (added to `owned`, for the caller to close).
 */
async function openSources(sources: SegmentSource[], owned: FileHandle[]): Promise<Map<string, SourceFile>> {
  const files = new Map<string, SourceFile>();
  for (const s of sources) {
    if (s.kind !== 'file' || s.size === 0 || files.has(s.path)) continue;
    if (s.opened) {
      const f = { ...s.opened, path: s.path };
      await verifySource(f);
      files.set(s.path, f);
      continue;
    }
    const handle = await open(s.path, 'r');
    owned.push(handle);
    files.set(s.path, { handle, identity: await identityOf(handle), path: s.path });
  }
  return files;
}

/**
 * Streams `size` bytes from `src` at `from` to `dst` at `at`, reading the next
 * chunk while the previous one is being written (two buffers), so the disk
 * sees a read and a write in flight instead of alternating idle phases.
 * Bounded by `size`: every read gives at least one byte, or the copy ends
 * as a refusal (a source shorter than the segment it was to give).
 */
async function copyRange(
  src: SourceFile,
  range: { from: number; size: number; at: number },
  dst: FileHandle,
  bufs: [Uint8Array, Uint8Array],
  progress: (n: number) => void,
  opts: WriteOptions,
) {
  const { from, size, at } = range;
  let done = 0;
  let pending: Promise<void> = Promise.resolve();
  let k: 0 | 1 = 0;
  while (done < size) {
    opts.signal?.throwIfAborted();
    const buf = bufs[k];
    const want = Math.min(buf.length, size - done);
    const { bytesRead } = await src.handle.read(buf, 0, want, from + done);
    if (bytesRead === 0) {
      await pending.catch(() => {});
      await verifySource(src);
      throw new TrtxError('WRITE_SOURCE_TRUNCATED', src.path, `segment source ended at byte ${from + done}, before byte ${from + size}`);
    }
    await pending;
    await opts.hooks?.afterCopy?.(bytesRead);
    const offset = at + done;
    pending = writeAllAt(dst, buf, offset, bytesRead).then(() => progress(bytesRead));
    done += bytesRead;
    k = k === 0 ? 1 : 0;
  }
  await pending;
}

/**
 * The one source file whose segments already sit exactly where the new
 * layout puts them (a canonical or head-only rewrite), or null.
 */
function sameLayoutSource(
  sources: SegmentSource[],
  files: Map<string, SourceFile>,
  at: { segmentBase: number; relative: number[]; fileSize: number },
): SourceFile | null {
  let path: string | null = null;
  for (const [i, s] of sources.entries()) {
    if (s.kind !== 'file') return null;
    if (s.size === 0) continue;
    if (path !== null && s.path !== path) return null;
    if (s.offset !== at.segmentBase + itemAt(at.relative, i, 'segment offsets')) return null;
    path = s.path;
  }
  const file = path === null ? undefined : files.get(path);
  return file !== undefined && file.identity.size === BigInt(at.fileSize) ? file : null;
}

/** Zeroes the padding between segments (a copied file's padding is not ours to keep). */
async function zeroGaps(out: FileHandle, sources: SegmentSource[], segmentBase: number, relative: number[]): Promise<void> {
  const zeros = new Uint8Array(64 * 1024);
  for (const [i, source] of sources.slice(0, -1).entries()) {
    let from = segmentBase + itemAt(relative, i, 'segment offsets') + sourceSize(source);
    const to = segmentBase + itemAt(relative, i + 1, 'segment offsets');
    while (from < to) {
      const n = Math.min(zeros.length, to - from);
      await writeAllAt(out, zeros, from, n);
      from += n;
    }
  }
}

/** Where the bytes go: the head, and each segment's offset past the segment base. */
interface Layout {
  head: Uint8Array;
  segmentBase: number;
  relative: number[];
  fileSize: number;
  segmentDataSize: number;
}

/**
 * Every segment stays where it is in its source file: the kernel copies the
 * file (src/util/kernel-copy.ts: a reflink where the filesystem shares
 * extents, else copy_file_range, the copy `cp` makes; bench/rewrite-copy.ts
 * measures it against cp), then the head is replaced and the padding between
 * segments zeroed. False when the kernel copy could not run: `out` is empty
 * again, for the streaming path.
 */
async function copySameLayout(
  out: FileHandle,
  src: SourceFile,
  sources: SegmentSource[],
  l: Layout,
  opts: WriteOptions & { cloneOnly: boolean },
): Promise<boolean> {
  if (!(await kernelCopy(src.handle, out, { watch: () => verifySource(src), signal: opts.signal, cloneOnly: opts.cloneOnly }))) {
    await out.truncate(0);
    return false;
  }
  await opts.hooks?.afterCopy?.(l.fileSize);
  await verifySource(src);
  const { size } = await out.stat();
  if (size !== l.fileSize) throw new TrtxError('WRITE_FAILED', src.path, `the kernel copy gave ${size} of the file's ${l.fileSize} bytes`);
  // As a copy of the file: its permissions too.
  await out.chmod((await src.handle.stat()).mode & 0o777);
  await writeAllAt(out, l.head, 0);
  await zeroGaps(out, sources, l.segmentBase, l.relative);
  opts.onProgress?.(l.fileSize, l.fileSize);
  return true;
}

async function streamSegments(
  out: FileHandle,
  sources: SegmentSource[],
  files: Map<string, SourceFile>,
  l: Layout,
  opts: WriteOptions,
): Promise<void> {
  await writeAllAt(out, l.head, 0);
  let written = l.head.length;
  const report = () => opts.onProgress?.(written, l.fileSize);
  report();
  const chunk = Math.min(COPY_CHUNK, Math.max(l.segmentDataSize, 1));
  const bufs: [Uint8Array, Uint8Array] = [new Uint8Array(chunk), new Uint8Array(chunk)];
  for (const [i, s] of sources.entries()) {
    const at = l.segmentBase + itemAt(l.relative, i, 'segment offsets');
    if (s.kind === 'bytes') {
      await writeAllAt(out, s.bytes, at);
      written += s.bytes.length;
      report();
    } else if (s.size > 0) {
      const src = files.get(s.path);
      if (src === undefined) throw new Error(`writePte: segment source ${s.path} was not opened`);
      const progress = (n: number) => {
        written += n;
        report();
      };
      await copyRange(src, { from: s.offset, size: s.size, at }, out, bufs, progress, opts);
    }
  }
}

/** Writes `program` and its segments to `target` atomically. */
export async function writePte(target: string, program: Program, sources: SegmentSource[], opts: WriteOptions = {}): Promise<WriteResult> {
  const alignment = opts.alignment ?? 4096;
  const { head, programSize, segmentBase, relative, segmentDataSize } = layoutProgram(program, sources, {
    alignment,
    extendedHeader: opts.extendedHeader ?? false,
    encoded: opts.encoded,
  });
  const fileSize = segmentDataSize > 0 ? segmentBase + segmentDataSize : head.length;
  const layout: Layout = { head, segmentBase, relative, fileSize, segmentDataSize };
  const tmp = tempPath(target);
  // Registered before it exists: an interrupt removes it (src/util/cleanup.ts).
  const untrack = trackPath(tmp);
  let out: FileHandle | undefined;
  const owned: FileHandle[] = [];
  try {
    const files = await openSources(sources, owned);
    const same = sameLayoutSource(sources, files, layout);
    // Asked before the first byte: a folder without room for the whole file
    // is refused now, not when the disk is full. Only a clone of the source
    // (a reflink, no new blocks) may still go ahead there.
    const shortfall = await spaceShortfall(target, BigInt(fileSize), opts.freeSpace);
    if (shortfall !== null && same === null) throw shortfall;
    out = await open(tmp, 'wx', 0o644);
    const copied = same !== null && (await copySameLayout(out, same, sources, layout, { ...opts, cloneOnly: shortfall !== null }));
    if (!copied && shortfall !== null) throw shortfall;
    if (!copied) await streamSegments(out, sources, files, layout, opts);
    // Padding is left as holes by the streaming path; truncate fixes the
    // length (and zero-fills) without writing padding bytes.
    await out.truncate(fileSize);
    await out.sync();
    await out.close();
    out = undefined;
    // The last look before publishing: a source written to after its bytes were copied would make a file of two.
    for (const f of files.values()) await verifySource(f);
    opts.signal?.throwIfAborted();
    await rename(tmp, target);
    await syncDir(dirname(target));
    return { path: target, fileSize, programSize, segmentBase, alignment };
  } catch (e) {
    await out?.close().catch(() => {});
    await rm(tmp, { force: true });
    if (e instanceof TrtxError) throw e;
    if ((e as Error).name === 'AbortError')
      throw new TrtxError('WRITE_ABORTED', target, 'write interrupted; the target was left untouched');
    const refusal = fileRefusal(e, target, 'write it');
    throw new TrtxError(refusal.code, refusal.location, `${refusal.message}; the target was left untouched`);
  } finally {
    untrack();
    for (const fh of owned) await fh.close().catch(() => {});
  }
}
