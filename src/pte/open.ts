// Opening a `.pte`: read the head, then only the program bytes, decode, and
// resolve the segment table to absolute file ranges. Segment bytes are never
// read here; `readRange` fetches exactly what a caller asks for.

import { open, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { TRUNCATED_HINT } from './truncated.js';
import { TrtxError } from '../util/errors.js';
import { identityChange, identityOf, type FileIdentity, type OpenedFile } from '../util/file-io.js';
import { ownPid } from '../util/os-process.js';
import { parseHeader, HEAD_BYTES, type PteHeader } from './header.js';
import { decodeProgram } from './decode.js';
import type { Program } from './model.js';
import { resolveSegments, type SegmentRange } from './segments.js';
import { pagedFileSource } from './program-source.js';
import { verifyProgramFlatBuffer } from './flatbuffer-verify.js';
import { describeHolder, targetLockHeld, type LockHolder } from '../util/file-lock.js';
import { ReportBudget } from '../util/report-budget.js';

export interface PteFile {
  path: string;
  fileSize: number;
  header: PteHeader;
  /**
   * The flatbuffer bytes, headers included: file offsets 0..programSize, or
   * the prefix the program reaches when a large claimed size is not all used.
   */
  programBytes: Uint8Array;
  program: Program;
  /** Absolute file offset of segment 0's base (0 when there are none). */
  segmentBase: number;
  /** Program.segments as absolute file ranges, checked against the file. */
  segments: SegmentRange[];
  /** Reads `length` bytes at absolute file offset `offset`. */
  readRange(offset: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
  /**
   * The descriptor the program was read through and the file's identity
   * then: a writer copies the segments from it and refuses the file if it
   * changed since (src/pte/write.ts). Absent for a program not read from a file.
   */
  opened?: OpenedFile;
  /** What reports about this program charge (src/util/report-budget.ts): the command's, or an unbounded one. */
  reportBudget: ReportBudget;
}

export interface OpenOptions {
  /** The command's report budget; this program's bytes add to its allowance. Unbounded when absent. */
  reportBudget?: ReportBudget;
  /** Test hook: runs after each read of the head, before the program bytes are read (a test writes the file there). */
  afterHead?: () => void | Promise<void>;
}

/**
 * How long a reader waits for an in-place writer of the file it reads
 * (its marker, or bytes that changed while they were read) before it says
 * PTE_REWRITE_IN_PROGRESS: a head write takes milliseconds plus its fsyncs.
 */
export const WRITER_WAIT_MS = 1500;

/** One read call asks for at most this much (fs.read takes an int32 length). */
const READ_CHUNK = 64 * 1024 * 1024;
/** Programs up to this size are read whole; larger ones are verified from pages first (program-source.ts). */
export const EAGER_PROGRAM_BYTES = 16 * 1024 * 1024;

async function readExactly(fh: FileHandle, offset: number, length: number, path: string): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fh.read(out, done, Math.min(READ_CHUNK, length - done), offset + done);
    if (bytesRead === 0)
      throw new TrtxError('PTE_TRUNCATED', path, `file ended at byte ${offset + done}, expected ${length} bytes at ${offset}`, {
        hint: TRUNCATED_HINT,
      });
    done += bytesRead;
  }
  return out;
}

const ZERO_BLOCK = new Uint8Array(4096);

/**
 * The extent of a large program, its blocks of zeros left untouched: a large
 * buffer is allocated zero-filled and the system commits its pages only
 * when written, so a FlatBuffer whose tables are spread over 2 GiB of zeros
 * (one table a page) holds the blocks its tables are in, not 2 GiB. A dense
 * program is held whole, as decoding it needs. Read in chunks through one
 * scratch buffer.
 */
async function readKeepingZeros(fh: FileHandle, length: number, path: string): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  const scratch = new Uint8Array(Math.min(length, 4 * 1024 * 1024));
  for (let at = 0; at < length; at += scratch.length) {
    const n = Math.min(scratch.length, length - at);
    let done = 0;
    while (done < n) {
      const { bytesRead } = await fh.read(scratch, done, n - done, at + done);
      if (bytesRead === 0)
        throw new TrtxError('PTE_TRUNCATED', path, `file ended at byte ${at + done}, expected ${length} bytes at 0`, {
          hint: TRUNCATED_HINT,
        });
      done += bytesRead;
    }
    for (let b = 0; b < n; b += ZERO_BLOCK.length) {
      const block = scratch.subarray(b, Math.min(n, b + ZERO_BLOCK.length));
      if (Buffer.compare(block, ZERO_BLOCK.subarray(0, block.length)) === 0) continue;
      // Only the span from its first to its last non-zero byte: the buffer need not start on a page, so a
      // whole block written would commit the two pages it straddles.
      let first = 0;
      while (block[first] === 0) first++;
      let last = block.length - 1;
      while (block[last] === 0) last--;
      out.set(block.subarray(first, last + 1), at + b + first);
    }
  }
  return out;
}

/** Refuses what is not a readable regular file, as a usage error (exit 2). */
export async function statInput(path: string): Promise<number> {
  let st;
  try {
    st = await stat(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new TrtxError('INPUT_UNREADABLE', path, code === 'ENOENT' ? 'no such file' : `cannot read (${code})`);
  }
  if (st.isDirectory()) throw new TrtxError('INPUT_UNREADABLE', path, 'is a directory, expected a .pte file');
  if (!st.isFile()) throw new TrtxError('INPUT_UNREADABLE', path, 'is not a regular file');
  return st.size;
}

/**
 * Opens `path` and decodes its program. A file written while it is read (an
 * in-place rewrite's head write, issue 43) is read again: the read is
 * trusted only when the file's identity (size, last change) and its head are
 * the same after it as before. A file marked by an in-place writer that
 * holds its lock, or one still changing, is waited for up to WRITER_WAIT_MS,
 * then is PTE_REWRITE_IN_PROGRESS; never PTE_REWRITE_INTERRUPTED for a live
 * writer nor a torn read's PTE_FLATBUFFER.
 */
export async function openPte(path: string, opts: OpenOptions = {}): Promise<PteFile> {
  await statInput(path);
  const until = Date.now() + WRITER_WAIT_MS;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    const attempt = await openOnce(path, opts);
    if (attempt.kind === 'opened') return attempt.pte;
    if (Date.now() >= until) {
      if (attempt.kind === 'failed' && attempt.writer === undefined) throw attempt.error;
      throw inProgress(path, attempt.writer?.holder ?? null);
    }
    await new Promise((r) => setTimeout(r, pause));
  }
}

/** One read of the file: opened, or raced by a writer (read again), or failed (and whether a writer holds it). */
type Attempt =
  | { kind: 'opened'; pte: PteFile }
  | { kind: 'raced'; writer: Writer | undefined }
  | { kind: 'failed'; error: unknown; writer: Writer | undefined };

/** Another process holding the file's writer lock; `holder` null where it did not say who (a lock by another name). */
interface Writer {
  holder: LockHolder | null;
}

/** The writer that holds `path`'s lock when another process does; undefined when none does (or this process, or it cannot be told). */
function otherWriter(path: string): Writer | undefined {
  const lock = targetLockHeld(path);
  if (!lock?.held || lock.holder?.pid === ownPid) return undefined;
  return { holder: lock.holder };
}

function inProgress(path: string, holder: LockHolder | null): TrtxError {
  return new TrtxError(
    'PTE_REWRITE_IN_PROGRESS',
    path,
    `an in-place rewrite is writing this file now (${describeHolder(holder)}); its program head is incomplete until it finishes`,
    {
      hint: 'read it again when the writer is done (a writer holds it for milliseconds, plus its fsyncs)',
    },
  );
}

async function openOnce(path: string, opts: OpenOptions): Promise<Attempt> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    throw new TrtxError('INPUT_UNREADABLE', path, `cannot open (${(e as NodeJS.ErrnoException).code})`);
  }
  let identity: FileIdentity | undefined;
  let head: Uint8Array | undefined;
  /** Whether the file is no longer what it was when this read began (a writer wrote meanwhile). */
  const changed = async () => {
    if (identity === undefined || head === undefined) return false;
    if (identityChange(identity, await identityOf(fh)) !== null) return true;
    const again = await readExactly(fh, 0, head.length, path).catch(() => null);
    return again === null || !Buffer.from(again).equals(Buffer.from(head));
  };
  try {
    // The file as opened: what its segments are copied from, and what it must still be then.
    identity = await identityOf(fh);
    head = await readExactly(fh, 0, Math.min(HEAD_BYTES, Number(identity.size)), path);
    await opts.afterHead?.();
    const pte = await decodeOpened(fh, path, identity, head, opts);
    if (await changed()) {
      await fh.close();
      return { kind: 'raced', writer: otherWriter(path) };
    }
    // Only a read that stands: one raced by a writer is read again and must not add to the allowance twice.
    pte.reportBudget.allowFor(pte.programBytes.length);
    return { kind: 'opened', pte };
  } catch (e) {
    const raced = e instanceof TrtxError && e.code.startsWith('PTE_') && (await changed().catch(() => false));
    await fh.close();
    if (raced) return { kind: 'raced', writer: otherWriter(path) };
    // The marker of an in-place rewrite whose writer holds the lock: it will finish; wait for it.
    if (e instanceof TrtxError && e.code === 'PTE_REWRITE_INTERRUPTED') {
      const writer = otherWriter(path);
      if (writer !== undefined) return { kind: 'failed', error: e, writer };
    }
    throw e;
  }
}

async function decodeOpened(fh: FileHandle, path: string, identity: FileIdentity, head: Uint8Array, opts: OpenOptions): Promise<PteFile> {
  const fileSize = Number(identity.size);
  const header = parseHeader(head, fileSize);
  const programSize = header.extended ? header.extended.programSize : fileSize;
  // A large claimed program is verified from pages first (a bounded
  // number kept); only the prefix its tables, vectors and strings reach is
  // then read, its zeros left uncommitted, and decoded.
  const needed =
    programSize <= EAGER_PROGRAM_BYTES
      ? programSize
      : verifyProgramFlatBuffer(pagedFileSource(fh.fd, programSize, path), header.rootOffset).extent;
  const programBytes =
    needed <= head.length
      ? head.subarray(0, needed)
      : needed <= EAGER_PROGRAM_BYTES
        ? await readExactly(fh, 0, needed, path)
        : await readKeepingZeros(fh, needed, path);
  const program = decodeProgram(programBytes, header.rootOffset);
  const segmentBase = header.extended?.segmentBaseOffset ?? 0;
  const segments = resolveSegments(program, header, fileSize);
  const reportBudget = opts.reportBudget ?? new ReportBudget();
  return {
    path,
    fileSize,
    header,
    programBytes,
    program,
    segmentBase,
    segments,
    readRange: (offset, length) => {
      if (offset < 0 || length < 0 || offset > fileSize || length > fileSize - offset) {
        return Promise.reject(new TrtxError('PTE_RANGE', path, `range ${offset}+${length} is outside the file (${fileSize} bytes)`));
      }
      return readExactly(fh, offset, length, path);
    },
    close: () => fh.close(),
    opened: { handle: fh, identity },
    reportBudget,
  };
}

/** Opens, runs `fn`, and always closes. */
export async function withPte<T>(path: string, fn: (pte: PteFile) => Promise<T> | T, opts: OpenOptions = {}): Promise<T> {
  const pte = await openPte(path, opts);
  try {
    return await fn(pte);
  } finally {
    await pte.close();
  }
}

/** Decodes a whole file held in memory (small files, tests, fuzzing). */
export function decodePteBytes(bytes: Uint8Array): { header: PteHeader; program: Program; segments: SegmentRange[] } {
  const header = parseHeader(bytes.subarray(0, HEAD_BYTES), bytes.length);
  const programSize = header.extended ? header.extended.programSize : bytes.length;
  const program = decodeProgram(bytes.subarray(0, programSize), header.rootOffset);
  return { header, program, segments: resolveSegments(program, header, bytes.length) };
}
