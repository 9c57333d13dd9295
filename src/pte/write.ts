// Writing a `.pte`: re-encode the program, lay segments out aligned, stream
// segment bytes from their source files, and publish atomically. The target
// is only ever replaced by a complete, fsynced file: the bytes go to a
// temporary file beside it, which is renamed over the target at the end.
// Any failure (or an abort) removes the temporary file and leaves the target
// as it was.

import { constants } from 'node:fs';
import { copyFile, open, rename, rm, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { trackPath } from '../util/cleanup.js';
import { TrtxError } from '../util/errors.js';
import { itemAt } from '../util/present.js';
import { encodeProgram } from './encode.js';
import { EXTENDED_HEADER_LENGTH, headWithExtendedHeader } from './header.js';
import { syncDir, writeAllAt } from '../util/file-io.js';
import { fileRefusal, tempPath } from '../util/target.js';
import type { Program } from './model.js';

/** Where a segment's bytes come from. */
export type SegmentSource = { kind: 'file'; path: string; offset: number; size: number } | { kind: 'bytes'; bytes: Uint8Array };

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

/**
 * Streams `size` bytes from `src` at `from` to `dst` at `at`, reading the next
 * chunk while the previous one is being written (two buffers), so the disk
 * sees a read and a write in flight instead of alternating idle phases.
 */
async function copyRange(
  src: FileHandle,
  from: number,
  size: number,
  dst: FileHandle,
  at: number,
  bufs: [Uint8Array, Uint8Array],
  progress: (n: number) => void,
  signal?: AbortSignal,
) {
  let done = 0;
  let pending: Promise<void> = Promise.resolve();
  let k: 0 | 1 = 0;
  while (done < size) {
    signal?.throwIfAborted();
    const buf = bufs[k];
    const want = Math.min(buf.length, size - done);
    const { bytesRead } = await src.read(buf, 0, want, from + done);
    if (bytesRead === 0) throw new TrtxError('WRITE_SOURCE_TRUNCATED', `source byte ${from + done}`, 'segment source ended early');
    await pending;
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
async function sameLayoutSource(
  sources: SegmentSource[],
  segmentBase: number,
  relative: number[],
  fileSize: number,
): Promise<string | null> {
  let path: string | null = null;
  for (const [i, s] of sources.entries()) {
    if (s.kind !== 'file') return null;
    if (s.size === 0) continue;
    if (path !== null && s.path !== path) return null;
    if (s.offset !== segmentBase + itemAt(relative, i, 'segment offsets')) return null;
    path = s.path;
  }
  if (path === null) return null;
  try {
    return (await stat(path)).size === fileSize ? path : null;
  } catch {
    return null;
  }
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

async function streamSegments(
  out: FileHandle,
  head: Uint8Array,
  sources: SegmentSource[],
  segmentBase: number,
  relative: number[],
  fileSize: number,
  segmentDataSize: number,
  opened: Map<string, FileHandle>,
  opts: WriteOptions,
): Promise<void> {
  await writeAllAt(out, head, 0);
  let written = head.length;
  const report = () => opts.onProgress?.(written, fileSize);
  report();
  const chunk = Math.min(COPY_CHUNK, Math.max(segmentDataSize, 1));
  const bufs: [Uint8Array, Uint8Array] = [new Uint8Array(chunk), new Uint8Array(chunk)];
  for (const [i, s] of sources.entries()) {
    const at = segmentBase + itemAt(relative, i, 'segment offsets');
    if (s.kind === 'bytes') {
      await writeAllAt(out, s.bytes, at);
      written += s.bytes.length;
      report();
    } else if (s.size > 0) {
      let src = opened.get(s.path);
      if (!src) opened.set(s.path, (src = await open(s.path, 'r')));
      await copyRange(
        src,
        s.offset,
        s.size,
        out,
        at,
        bufs,
        (n) => {
          written += n;
          report();
        },
        opts.signal,
      );
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
  const tmp = tempPath(target);
  // Registered before it exists: an interrupt removes it (src/util/cleanup.ts).
  const untrack = trackPath(tmp);
  let out: FileHandle | undefined;
  const opened = new Map<string, FileHandle>();
  try {
    const same = await sameLayoutSource(sources, segmentBase, relative, fileSize);
    if (same) {
      // Every segment stays where it is in its source file: let the kernel
      // copy the file, then replace the head and zero the padding between
      // segments. COPYFILE_FICLONE asks for a reflink (shared extents: no
      // bytes copied on XFS, Btrfs, bcachefs) and falls back to libuv's
      // copy_file_range loop (the in-kernel copy `cp` makes) where the file
      // system has none, as on ext4 (Node's fs.copyFile docs; libuv
      // uv_fs_copyfile). bench/rewrite-copy.ts measures it against cp.
      await copyFile(same, tmp, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
      out = await open(tmp, 'r+');
      await writeAllAt(out, head, 0);
      await zeroGaps(out, sources, segmentBase, relative);
      opts.onProgress?.(fileSize, fileSize);
    } else {
      out = await open(tmp, 'wx', 0o644);
      await streamSegments(out, head, sources, segmentBase, relative, fileSize, segmentDataSize, opened, opts);
    }
    // Padding is left as holes by the streaming path; truncate fixes the
    // length (and zero-fills) without writing padding bytes.
    await out.truncate(fileSize);
    await out.sync();
    await out.close();
    out = undefined;
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
    for (const fh of opened.values()) await fh.close().catch(() => {});
  }
}
