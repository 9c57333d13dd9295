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
import { isReferenceEngine } from './reference-engine.js';
import { isTrtxError } from '../util/errors.js';

export type EngineKind = 'tensorrt' | 'reference' | 'unknown';

export interface EngineCensus {
  /** TensorRT plans. */
  tensorrt: number;
  /** trtx reference engines. */
  reference: number;
  /** Neither, or a blob that does not parse. */
  unknown: number;
}

export function engineKindOf(head: Uint8Array): EngineKind {
  // The plan magic first: a reference engine's bytes 0..3 are a small root offset, never "ftrt".
  if (head.length >= 4 && String.fromCharCode(head[0], head[1], head[2], head[3]) === 'ftrt') return 'tensorrt';
  if (isReferenceEngine(head)) return 'reference';
  return 'unknown';
}

/** The kind of one delegate's engine, from its parsed blob. */
export async function readEngineKind(pte: PteFile, ref: DelegateRef, blob: ParsedBlob): Promise<EngineKind> {
  const n = Number(blob.engineSize < 8n ? blob.engineSize : 8n);
  const place = blobPlace(pte, ref);
  const head =
    place.location === 'inline'
      ? pte.program.backendDelegateData[place.index].data.subarray(blob.engineOffset, blob.engineOffset + n)
      : await pte.readRange(place.fileOffset! + blob.engineOffset, n);
  return engineKindOf(head);
}

/** The kind of one delegate's engine; 'unknown' for a blob that did not parse (null) or an engine head that cannot be read. */
export async function delegateEngineKind(pte: PteFile, ref: DelegateRef, blob: ParsedBlob | null): Promise<EngineKind> {
  if (!blob) return 'unknown';
  try {
    return await readEngineKind(pte, ref, blob);
  } catch (e) {
    if (!isTrtxError(e)) throw e;
    return 'unknown';
  }
}

/** A census of engine kinds, one per delegate. */
export function countEngineKinds(kinds: Iterable<EngineKind>): EngineCensus {
  const census: EngineCensus = { tensorrt: 0, reference: 0, unknown: 0 };
  for (const k of kinds) census[k] += 1;
  return census;
}

/**
 * How many TensorRTBackend delegates hold each kind of engine. `parsed`: the
 * blobs a caller already read and parsed (checks/context.ts; a TensorRT
 * delegate missing from it did not parse), so no blob is read twice; without
 * it each blob is read here.
 */
export async function engineCensus(pte: PteFile, parsed?: readonly (DelegateRef & { blob: ParsedBlob })[]): Promise<EngineCensus> {
  const kinds: EngineKind[] = [];
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
    kinds.push(await delegateEngineKind(pte, ref, blob));
  }
  return countEngineKinds(kinds);
}

/** The line every command prints about a program with reference engines; null when it has none. */
export function referenceEngineLine(census: EngineCensus): string | null {
  const n = census.reference;
  if (n === 0) return null;
  const all = census.tensorrt + census.reference + census.unknown;
  if (n === 1 && all === 1)
    return '1 TensorRT delegate holds a trtx reference engine, not a TensorRT plan: the program runs in trtx verify, not on TensorRT';
  const head = n === all ? `${n} TensorRT delegates hold` : `${n} of ${all} TensorRT delegates hold`;
  return `${head} trtx reference engines, not TensorRT plans: the program runs in trtx verify, not on TensorRT`;
}
