// What a TensorRT delegate's engine bytes are: a TensorRT plan (a serialized
// ICudaEngine, `ftrt` at byte 0), a trtx reference engine (a FlatBuffer with
// identifier `TRXE` at bytes 4..7, schemas/reference-engine.md), or neither.
// A program whose delegates hold reference engines was made by trtx's
// reference lowering or example builder (src/examples/): it runs in trtx's
// runner, never on TensorRT, and every command says so. Only the first 8 engine bytes are
// read.

import type { PteFile } from '../pte/open.js';
import type { ParsedBlob } from './blob.js';
import { blobPlace, delegatesOf, isTensorRT, readDelegateBlob, type DelegateRef } from './delegates.js';
import { decodeEngineFromSource, isStandinEngine, readEngine, type StandinEngine } from './standin-engine.js';
import { engineOnce, relocated, settle } from './engine-once.js';
import { pagedFileSource } from '../pte/program-source.js';
import type { EngineReadCost } from './standin-engine-read.js';
import { describeStandinProgram, SYNTHETIC_ENGINE } from './standin-program.js';
import { isTrtxError } from '../util/errors.js';
import { itemAt } from '../util/present.js';

export type EngineKind = 'tensorrt' | 'reference' | 'unknown';

/** Totals over the version-2 engines' programs. */
export interface ProgramTotals {
  engines: number;
  instructions: number;
  operators: number;
  weight_bytes: number;
  program_bytes: number;
}

export interface EngineCensus {
  /** TensorRT plans. */
  tensorrt: number;
  /** trtx reference engines, of any version (and ones that do not decode). */
  reference: number;
  /** Of the reference engines: version 1, synthetic (fixtures and benchmarks; a made-up function, not the model). */
  synthetic: number;
  /** Of the reference engines: version 2, the partition as an ExecuTorch program, with totals over their programs. */
  programs: ProgramTotals;
  /** Neither, or a blob that does not parse. */
  unknown: number;
}

/** One delegate's engine: its kind and, for a reference engine that decodes, the engine. */
export interface EngineDetail {
  kind: EngineKind;
  /** null unless a reference engine that decodes. */
  engine: StandinEngine | null;
}

export function engineKindOf(head: Uint8Array): EngineKind {
  // The plan magic first: a reference engine's bytes 0..3 are a small root offset, never "ftrt".
  if (head.length >= 4 && String.fromCharCode(...head.subarray(0, 4)) === 'ftrt') return 'tensorrt';
  if (isStandinEngine(head)) return 'reference';
  return 'unknown';
}

/** `n` bytes of one delegate's engine from its start. */
export async function readEngineBytes(pte: PteFile, ref: DelegateRef, blob: ParsedBlob, n: number): Promise<Uint8Array> {
  const place = blobPlace(pte, ref);
  return place.location === 'inline'
    ? itemAt(pte.program.backendDelegateData, place.index, 'backend_delegate_data').data.subarray(blob.engineOffset, blob.engineOffset + n)
    : await pte.readRange(place.fileOffset! + blob.engineOffset, n);
}

/** The kind of one delegate's engine, from its parsed blob. */
export async function readEngineKind(pte: PteFile, ref: DelegateRef, blob: ParsedBlob): Promise<EngineKind> {
  return engineKindOf(await readEngineBytes(pte, ref, blob, Number(blob.engineSize < 8n ? blob.engineSize : 8n)));
}

/**
 * Reads a reference engine by its metadata: its table, its program's header
 * and flatbuffer, never the program's segments nor a version-3 engine's
 * weights (refusals are REF_ENGINE_* TrtxErrors). A version-3 engine's weight
 * bytes are the sizes of its keys' named-data segments in `pte`. An engine
 * in a segment of an opened file is walked once through a bounded page cache
 * (pagedFileSource); one held in memory (inline, or a file read into memory)
 * through readBounded. Each engine is read once per opened file, whatever
 * number of delegates name its blob (engine-once.ts); `cost` asks for a read
 * of its own, counted.
 */
export async function readStandinEngine(pte: PteFile, ref: DelegateRef, blob: ParsedBlob, cost?: EngineReadCost): Promise<StandinEngine> {
  const place = blobPlace(pte, ref);
  const key = `${place.location} ${place.location === 'segment' ? `${place.fileOffset}+${place.size}` : place.index} engine ${blob.engineOffset}+${blob.engineSize}`;
  const inline = place.location === 'inline' ? itemAt(pte.program.backendDelegateData, place.index, 'backend_delegate_data').data : null;
  const read = () => readEngineOf(pte, place, inline, blob, cost);
  return cost ? relocated(await settle(read()), ref.location) : engineOnce(pte, key, inline, read, ref.location);
}

async function readEngineOf(
  pte: PteFile,
  place: ReturnType<typeof blobPlace>,
  inline: Uint8Array | null,
  blob: ParsedBlob,
  cost: EngineReadCost | undefined,
): Promise<StandinEngine> {
  const at = blob.engineOffset;
  const size = Number(blob.engineSize);
  const opts = { location: 'engine' };
  let engine: StandinEngine;
  const fd = pte.opened?.handle.fd;
  if (inline === null && fd !== undefined) {
    const src = pagedFileSource(fd, size, pte.path, { base: place.fileOffset! + at });
    engine = decodeEngineFromSource(src, opts);
    if (cost) {
      cost.bytesRead += src.bytesRead();
      cost.reads += src.pagesRead();
    }
  } else {
    const read =
      inline !== null
        ? (offset: number, length: number) => Promise.resolve(inline.subarray(at + offset, at + offset + length))
        : (offset: number, length: number) => pte.readRange(place.fileOffset! + at + offset, length);
    engine = await readEngine(size, read, opts, cost);
  }
  const p = engine.program;
  if (p && p.externalWeights.length) {
    const sizes = namedDataSizes(pte);
    p.weightBytes = p.externalWeights.reduce((n, w) => n + (w.key === null ? 0 : (sizes.get(w.key) ?? 0)), 0);
  }
  return engine;
}

/** Each named-data key of the outer program and the size of the segment it names (the first entry of a repeated key). */
export function namedDataSizes(pte: Pick<PteFile, 'program' | 'segments'>): Map<string, number> {
  const out = new Map<string, number>();
  for (const n of pte.program.namedData) {
    const size = pte.segments[n.segmentIndex]?.size;
    if (n.key !== null && size !== undefined && !out.has(n.key)) out.set(n.key, size);
  }
  return out;
}

/** The kind of one delegate's engine; 'unknown' for a blob that did not parse (null) or an engine head that cannot be read. */
export async function delegateEngineKind(pte: PteFile, ref: DelegateRef, blob: ParsedBlob | null): Promise<EngineKind> {
  return (await delegateEngine(pte, ref, blob)).kind;
}

/** The kind of one delegate's engine and, for a reference engine that decodes, the engine. */
export async function delegateEngine(pte: PteFile, ref: DelegateRef, blob: ParsedBlob | null): Promise<EngineDetail> {
  if (!blob) return { kind: 'unknown', engine: null };
  let kind: EngineKind;
  try {
    kind = await readEngineKind(pte, ref, blob);
  } catch (e) {
    if (!isTrtxError(e)) throw e;
    return { kind: 'unknown', engine: null };
  }
  if (kind !== 'reference') return { kind, engine: null };
  try {
    return { kind, engine: await readStandinEngine(pte, ref, blob) };
  } catch (e) {
    // trtx check reports why it does not decode.
    if (!isTrtxError(e)) throw e;
    return { kind, engine: null };
  }
}

/** A census of engine kinds, one per delegate. */
export function countEngines(details: Iterable<EngineDetail>): EngineCensus {
  const census: EngineCensus = {
    tensorrt: 0,
    reference: 0,
    synthetic: 0,
    programs: { engines: 0, instructions: 0, operators: 0, weight_bytes: 0, program_bytes: 0 },
    unknown: 0,
  };
  for (const d of details) {
    census[d.kind] += 1;
    const p = d.engine?.program;
    if (d.engine && !p) census.synthetic += 1;
    if (p) {
      census.programs.engines += 1;
      census.programs.instructions += p.instructions;
      census.programs.operators += p.operators;
      census.programs.weight_bytes += p.weightBytes;
      census.programs.program_bytes += p.programBytes;
    }
  }
  return census;
}

/**
 * How many TensorRTBackend delegates hold each kind of engine. `parsed`: the
 * blobs a caller already read and parsed (checks/context.ts; a TensorRT
 * delegate missing from it did not parse), so no blob is read twice; without
 * it each blob is read here.
 */
export async function engineCensus(pte: PteFile, parsed?: readonly (DelegateRef & { blob: ParsedBlob })[]): Promise<EngineCensus> {
  const details: EngineDetail[] = [];
  for (const ref of delegatesOf(pte, isTensorRT)) {
    let blob: ParsedBlob | null = null;
    if (parsed) {
      blob = parsed.find((t) => t.planIndex === ref.planIndex && t.delegateIndex === ref.delegateIndex)?.blob ?? null;
    } else {
      try {
        blob = await readDelegateBlob(pte, ref);
      } catch (e) {
        if (!isTrtxError(e)) throw e;
      }
    }
    details.push(await delegateEngine(pte, ref, blob));
  }
  return countEngines(details);
}

/** What a program's delegates hold, for people: "the partition as an ExecuTorch program (...)" or "synthetic reference engine (...)". */
export function describeEngine(engine: StandinEngine | null): string {
  if (!engine) return 'trtx reference engine that does not decode (trtx check says why)';
  return engine.program ? `trtx reference engine: ${describeStandinProgram(engine.program)}` : SYNTHETIC_ENGINE;
}

const RUNS = 'the program runs in trtx verify, not on TensorRT';

/** The lines every command prints about a program with reference engines; none when it has none. */
export function standinEngineLines(census: EngineCensus): string[] {
  const all = census.tensorrt + census.reference + census.unknown;
  const head = (n: number) =>
    n === all ? (n === 1 ? '1 TensorRT delegate holds' : `${n} TensorRT delegates hold`) : `${n} of ${all} TensorRT delegates hold`;
  const lines: string[] = [];
  const p = census.programs;
  if (p.engines > 0) {
    const what = p.engines === 1 ? 'a trtx reference engine, not a TensorRT plan' : 'trtx reference engines, not TensorRT plans';
    const totals = describeStandinProgram({
      instructions: p.instructions,
      operators: p.operators,
      weightBytes: p.weight_bytes,
      programBytes: p.program_bytes,
    });
    lines.push(
      `${head(p.engines)} ${what}: ${p.engines === 1 ? totals : totals.replace('the partition as', 'each partition as').replace('(', '(in all: ')}; ${RUNS}`,
    );
  }
  if (census.synthetic > 0) {
    const what =
      census.synthetic === 1 ? 'a synthetic reference engine, not a TensorRT plan' : 'synthetic reference engines, not TensorRT plans';
    lines.push(
      `${head(census.synthetic)} ${what} (fixtures and benchmarks; ${census.synthetic === 1 ? 'it computes' : 'they compute'} a made-up function, not the model): ${RUNS}, and its numbers are synthetic`,
    );
  }
  const unread = census.reference - census.synthetic - p.engines;
  if (unread > 0)
    lines.push(
      `${head(unread)} trtx reference ${unread === 1 ? 'engine' : 'engines'} that ${unread === 1 ? 'does' : 'do'} not decode (trtx check says why)`,
    );
  return lines;
}
