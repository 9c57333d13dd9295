// Rewriting only the head of a `.pte` (header + program flatbuffer) when the
// re-encoded program still fits before the segment base, so a change of a
// few bytes of meaning does not copy gigabytes of engine segments.
//
// A torn write must never leave bytes that parse as a valid program with the
// wrong meaning. Protocol (each step fsynced before the next):
//   0. the new head goes to a journal beside the file (FILE.trtx-inplace),
//      written to a temporary name and renamed;
//   1. bytes 4..7 become the marker "TXIP": from here until step 4 every
//      reader refuses the file as an interrupted rewrite (PTE_REWRITE_INTERRUPTED);
//   2. the new head from byte 8 to the segment base;
//   3. bytes 0..3 (root offset);
//   4. bytes 4..7 become "ET12": the new program is live;
//   5. the journal is removed.
// The file is opened for the write first, and must still be the file the
// program was read from, unchanged since (WRITE_SOURCE_CHANGED otherwise).
// A crash before 1 leaves the old program (a journal left beside a valid
// file is stale and ignored); after 4, the new one; in between, the marker,
// and rerunning an in-place rewrite rolls forward from the journal.
// The segments are never written: the file keeps its size and segment table.

import { lstat, open, readdir, rename, rm, readFile, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { trackPath, withSignalsHeld } from '../util/cleanup.js';
import { TrtxError } from '../util/errors.js';
import { encodeProgram } from './encode.js';
import {
  EXTENDED_HEADER_LENGTH,
  FILE_IDENTIFIER,
  IN_PLACE_JOURNAL_SUFFIX,
  IN_PLACE_MARKER,
  headWithExtendedHeader,
  parseHeader,
  HEAD_BYTES,
} from './header.js';
import { syncDir, verifyUnchanged, writeAllAt } from '../util/file-io.js';
import type { Program } from './model.js';
import type { PteFile } from './open.js';
import { writeFromSource } from './copy.js';
import { fileRefusal, tempPath } from '../util/target.js';
import type { FreeSpaceReader } from '../util/free-space.js';
import { headWriteNote, journalPath, rolledForwardNote, type InPlaceStep } from './in-place-messages.js';
import { sameSegments, type EncodedProgram, type WriteResult } from './write.js';

export { journalPath };

const JOURNAL_MAGIC = 'TRTXJNL1';
const JOURNAL_FIXED = 8 + 8 + 8 + 32;

export type { InPlaceStep };
export const IN_PLACE_STEPS: readonly InPlaceStep[] = ['journal', 'marker', 'body', 'root', 'identifier', 'cleanup'];

export interface InPlaceHooks {
  /** Called after each step is durable; a throw simulates a crash there. */
  afterStep?: (step: InPlaceStep) => void | Promise<void>;
}

/** `encoded`: the program as planHead encoded it, when it did (for the full write that follows). */
export type HeadPlan =
  { fits: true; head: Uint8Array; programSize: number; segmentBase: number } | { fits: false; reason: string; encoded?: EncodedProgram };

/**
 * The new head for `program` laid over `pte`'s segments as they are: bytes
 * 0..segmentBase, zero-padded. `fits: false` says why the head cannot be
 * rewritten alone (the caller falls back to a full rewrite).
 */
export function planHead(pte: PteFile, program: Program, fileSegments: Program['segments']): HeadPlan {
  const eh = pte.header.extended;
  if (!eh || pte.segmentBase === 0) return { fits: false, reason: 'the file has no segments, so the program is the whole file' };
  if (!sameSegments(program.segments, fileSegments)) return { fits: false, reason: 'the segment table changed' };
  const fb = encodeProgram(program);
  const programSize = fb.length + EXTENDED_HEADER_LENGTH;
  if (programSize > pte.segmentBase) {
    return {
      fits: false,
      reason: `the new program (${programSize} bytes) does not fit before the segments at byte ${pte.segmentBase}`,
      encoded: { segments: program.segments.map((s) => ({ ...s })), bytes: fb },
    };
  }
  const dataEnd = program.segments.reduce((n, s) => (s.offset + s.size > n ? s.offset + s.size : n), 0n);
  const segmentDataSize = eh.segmentDataSize ?? Number(dataEnd);
  const head = headWithExtendedHeader(fb, pte.segmentBase, segmentDataSize, pte.segmentBase);
  return { fits: true, head, programSize, segmentBase: pte.segmentBase };
}

function encodeJournal(fileSize: number, head: Uint8Array): Uint8Array {
  const out = new Uint8Array(JOURNAL_FIXED + head.length);
  const view = new DataView(out.buffer);
  out.set(new TextEncoder().encode(JOURNAL_MAGIC), 0);
  view.setBigUint64(8, BigInt(fileSize), true);
  view.setBigUint64(16, BigInt(head.length), true);
  out.set(createHash('sha256').update(head).digest(), 24);
  out.set(head, JOURNAL_FIXED);
  return out;
}

function decodeJournal(bytes: Uint8Array, where: string): { fileSize: number; head: Uint8Array } {
  const bad = (why: string): never => {
    throw new TrtxError(
      'PTE_REWRITE_INTERRUPTED',
      where,
      `the in-place rewrite journal is unusable (${why}); the program head cannot be recovered`,
      {
        hint: 'restore the file from its source (or re-export it); its segments are intact but its program is not',
      },
    );
  };
  if (bytes.length < JOURNAL_FIXED || new TextDecoder().decode(bytes.subarray(0, 8)) !== JOURNAL_MAGIC) bad('not a trtx journal');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fileSize = Number(view.getBigUint64(8, true));
  const length = view.getBigUint64(16, true);
  if (length !== BigInt(bytes.length - JOURNAL_FIXED)) bad('truncated');
  const head = bytes.subarray(JOURNAL_FIXED);
  if (!Buffer.from(createHash('sha256').update(head).digest()).equals(Buffer.from(bytes.subarray(24, 56)))) bad('checksum mismatch');
  // The head must itself be a sound program head for a file of that size.
  try {
    parseHeader(head.subarray(0, HEAD_BYTES), fileSize);
  } catch {
    bad('its head does not parse');
  }
  return { fileSize, head };
}

/** Steps 1..5 over an open read-write handle; shared by a fresh write and a roll-forward. */
async function applyHead(journal: string, fh: FileHandle, head: Uint8Array, hooks: InPlaceHooks): Promise<void> {
  const step = async (name: InPlaceStep) => {
    await fh.sync();
    await hooks.afterStep?.(name);
  };
  await writeAllAt(fh, new TextEncoder().encode(IN_PLACE_MARKER), 4);
  await step('marker');
  await writeAllAt(fh, head.subarray(8), 8);
  await step('body');
  await writeAllAt(fh, head.subarray(0, 4), 0);
  await step('root');
  await writeAllAt(fh, new TextEncoder().encode(FILE_IDENTIFIER), 4);
  await step('identifier');
  await rm(journal, { force: true });
  await syncDir(dirname(journal));
  await hooks.afterStep?.('cleanup');
}

export interface InPlaceResult {
  path: string;
  fileSize: number;
  programSize: number;
  segmentBase: number;
  /** Bytes written to the file (the head), journal not counted. */
  bytesWritten: number;
}

/**
 * Writes `head` (from planHead) over the start of `pte`'s file, at `path`
 * (the file a symbolic link points to), by the protocol above. SIGINT and
 * SIGTERM wait until it has finished (a few fsyncs): the journal is for
 * crashes, an interrupt should not need it.
 */
export function writeHeadInPlace(
  pte: PteFile,
  plan: Extract<HeadPlan, { fits: true }>,
  hooks: InPlaceHooks = {},
  path: string = pte.path,
): Promise<InPlaceResult> {
  // The last step that became durable: what a signal's exit message says the file holds.
  let reached: InPlaceStep | null = null;
  const tracked: InPlaceHooks = {
    afterStep: async (step) => {
      reached = step;
      await hooks.afterStep?.(step);
    },
  };
  return withSignalsHeld(
    () => writeHead(pte, plan, tracked, path),
    (outcome) => headWriteNote(path, outcome.ok ? 'cleanup' : reached),
  );
}

/** `path` open for writing, refused unless it is still the file `pte` was read from, as it was then. */
async function openUnchanged(pte: PteFile, path: string): Promise<FileHandle> {
  const fh = await open(path, 'r+');
  try {
    if (pte.opened) await verifyUnchanged(path, { handle: fh, identity: pte.opened.identity });
    return fh;
  } catch (e) {
    await fh.close();
    throw e;
  }
}

async function writeHead(pte: PteFile, plan: Extract<HeadPlan, { fits: true }>, hooks: InPlaceHooks, path: string): Promise<InPlaceResult> {
  const journal = journalPath(path);
  const fh = await openUnchanged(pte, path).catch((e: unknown) => {
    throw fileRefusal(e, path, 'rewrite it in place');
  });
  try {
    await writeJournal(journal, pte.fileSize, plan.head, path);
    await hooks.afterStep?.('journal');
    await applyHead(journal, fh, plan.head, hooks);
  } catch (e) {
    // Only I/O failures are explained here; anything else (a bug, a test's
    // simulated crash, a refusal) goes up as it is.
    if (e instanceof TrtxError || typeof (e as NodeJS.ErrnoException).code !== 'string') throw e;
    throw new TrtxError(
      'WRITE_FAILED',
      path,
      `in-place write failed (${(e as Error).message}); the file may be marked as an interrupted rewrite`,
      {
        hint: `rerun \`trtx rewrite ${path} --in-place\` to finish it from ${journal}`,
      },
    );
  } finally {
    await fh.close();
  }
  return { path, fileSize: pte.fileSize, programSize: plan.programSize, segmentBase: plan.segmentBase, bytesWritten: plan.head.length };
}

/** Step 0: the journal, written to a temporary name and renamed; `path` is left untouched when it fails. */
async function writeJournal(journal: string, fileSize: number, head: Uint8Array, path: string): Promise<void> {
  const tmp = tempPath(journal);
  const untrack = trackPath(tmp);
  try {
    const jf = await open(tmp, 'wx', 0o600);
    try {
      await writeAllAt(jf, encodeJournal(fileSize, head), 0);
      await jf.sync();
    } finally {
      await jf.close();
    }
    await rename(tmp, journal);
    await syncDir(dirname(path));
  } catch (e) {
    await rm(tmp, { force: true });
    throw new TrtxError('WRITE_FAILED', journal, `cannot write the in-place journal: ${(e as Error).message}; ${path} was left untouched`);
  } finally {
    untrack();
  }
}

/**
 * Finishes an interrupted in-place rewrite of `path` from its journal (roll
 * forward). Returns false when the file is not marked as interrupted (and
 * removes a stale journal beside it).
 */
export async function finishInterruptedInPlace(path: string, hooks: InPlaceHooks = {}): Promise<boolean> {
  return (await recoverInPlace(path, hooks)) !== null;
}

/** finishInterruptedInPlace, saying which journal it finished from (null: the file was not marked). */
export function recoverInPlace(path: string, hooks: InPlaceHooks = {}): Promise<string | null> {
  return withSignalsHeld(
    () => rollForward(path, hooks),
    (outcome) => (outcome.ok && outcome.value !== null ? rolledForwardNote(path, outcome.value) : null),
  );
}

/**
 * The journal of an interrupted rewrite of the file open as `fh`: beside
 * `path`, or beside another name of the same file in its folder (a hard link
 * the rewrite was given; one in another folder cannot be found from here).
 */
async function findJournal(path: string, fh: FileHandle): Promise<string | null> {
  const own = journalPath(path);
  if ((await lstat(own).catch(() => null)) !== null) return own;
  const { dev, ino, nlink } = await fh.stat();
  if (nlink <= 1) return null;
  const dir = dirname(path);
  for (const name of await readdir(dir).catch(() => [])) {
    if (!name.endsWith(IN_PLACE_JOURNAL_SUFFIX) || name.length === IN_PLACE_JOURNAL_SUFFIX.length) continue;
    const owner = await lstat(join(dir, name.slice(0, -IN_PLACE_JOURNAL_SUFFIX.length))).catch(() => null);
    if (owner && owner.dev === dev && owner.ino === ino) return join(dir, name);
  }
  return null;
}

async function rollForward(path: string, hooks: InPlaceHooks): Promise<string | null> {
  const fh = await open(path, 'r+');
  try {
    const { size, nlink } = await fh.stat();
    const first = new Uint8Array(Math.min(HEAD_BYTES, size));
    await fh.read(first, 0, first.length, 0);
    try {
      parseHeader(first, size);
      // A journal beside a file that is not marked is stale: its rewrite
      // either never marked the file or finished.
      await rm(journalPath(path), { force: true });
      return null;
    } catch (e) {
      if (!(e instanceof TrtxError) || e.code !== 'PTE_REWRITE_INTERRUPTED') return null;
    }
    const journal = await findJournal(path, fh);
    if (journal === null) {
      const others =
        nlink > 1
          ? `; the file has ${nlink - 1} other name(s) (hard links): rerun through the one the rewrite was given, its journal is beside it`
          : '';
      throw new TrtxError(
        'PTE_REWRITE_INTERRUPTED',
        path,
        `the file is marked as an interrupted in-place rewrite but its journal ${journalPath(path)} is missing`,
        {
          hint: `restore the file from its source (or re-export it); its segments are intact but its program is not${others}`,
        },
      );
    }
    const { fileSize, head } = decodeJournal(await readFile(journal), journal);
    if (fileSize !== size) {
      throw new TrtxError(
        'PTE_REWRITE_INTERRUPTED',
        path,
        `the journal was written for a ${fileSize}-byte file but the file has ${size} bytes`,
        {
          hint: 'restore the file from its source (or re-export it)',
        },
      );
    }
    await applyHead(journal, fh, head, hooks);
    return journal;
  } finally {
    await fh.close();
  }
}

export type RewriteWrite =
  | { mode: 'in-place'; result: InPlaceResult }
  | {
      mode: 'atomic';
      result: WriteResult;
      fallback: string | null;
      /** With a fallback: the other hard links of the file replaced, which keep the old program (0: none). */
      brokenLinks: number;
    }
  | { mode: 'unchanged' };

/**
 * Publishes `program` (`pte`'s, changed by passes) to `output`. In place
 * (`output` is then the file `pte` was read from, never a symbolic link to
 * it: claimTarget resolves one): the head alone when it fits (nothing at all
 * when `changed` is false), else a full atomic rewrite of the same path,
 * with the reason in `fallback`. Otherwise an atomic write to `output`.
 * `fileSegments` is the segment table as opened, before passes.
 */
export async function publishRewrite(
  pte: PteFile,
  program: Program,
  fileSegments: Program['segments'],
  opts: {
    inPlace: boolean;
    output: string;
    changed: boolean;
    onProgress?: (done: number, total: number) => void;
    signal?: AbortSignal;
    hooks?: InPlaceHooks;
    /** A fallback may replace a file that has other hard links (they keep the old program). */
    breakHardLinks?: boolean;
    /** The output folder's free space (default statfs(2)), asked before a full write. */
    freeSpace?: FreeSpaceReader;
  },
): Promise<RewriteWrite> {
  let fallback: string | null = null;
  let brokenLinks = 0;
  let encoded: EncodedProgram | undefined;
  if (opts.inPlace) {
    if (!opts.changed) return { mode: 'unchanged' };
    const plan = planHead(pte, program, fileSegments);
    if (plan.fits) return { mode: 'in-place', result: await writeHeadInPlace(pte, plan, opts.hooks, opts.output) };
    fallback = plan.reason;
    encoded = plan.encoded;
    brokenLinks = await otherHardLinks(opts.output, plan.reason, Boolean(opts.breakHardLinks));
  }
  const result = await writeFromSource(pte, program, opts.output, {
    onProgress: opts.onProgress,
    signal: opts.signal,
    encoded,
    freeSpace: opts.freeSpace,
  });
  return { mode: 'atomic', result, fallback, brokenLinks };
}

/**
 * A full rewrite renames a new file over the path: the file's other names
 * (hard links) keep the old inode and so the old program. Someone who asked
 * for --in-place expects the file itself to change, so that is refused
 * unless asked for; the count is what the caller reports.
 */
async function otherHardLinks(path: string, reason: string, allowed: boolean): Promise<number> {
  const { nlink } = await stat(path);
  if (nlink <= 1 || allowed) return Math.max(0, nlink - 1);
  throw new TrtxError(
    'REWRITE_HARD_LINKS',
    path,
    `cannot rewrite in place (${reason}), and a full rewrite would replace the file: its ${nlink - 1} other hard link(s) would keep the old program`,
    {
      hint: 'add --break-hard-links to replace it anyway (the other names keep the old program), or rewrite with -o to a new file',
    },
  );
}
