// Finding and reading a method's TensorRT delegates inside an opened `.pte`:
// where each blob lives (inline or a segment) and its parsed header and
// metadata. Engine bytes are never read here.

import { DataLocation, type BackendDelegate, type ExecutionPlan, type Instruction } from '../pte/model.js';
import type { PteFile } from '../pte/open.js';
import { TrtxError } from '../util/errors.js';
import { TRT_BACKEND_ID, type ParsedBlob } from './blob.js';
import { blobOnce } from './blob-once.js';
import { itemAt } from '../util/present.js';

export interface DelegateRef {
  planIndex: number;
  plan: ExecutionPlan;
  delegateIndex: number;
  delegate: BackendDelegate;
  /** `decode > delegate 0 (TensorRTBackend)` */
  location: string;
}

export const isTensorRT = (d: BackendDelegate) => d.id === TRT_BACKEND_ID;

export function delegateLocation(plan: ExecutionPlan, planIndex: number, delegateIndex: number, d: BackendDelegate): string {
  return `${plan.name ?? `execution_plan[${planIndex}]`} > delegate ${delegateIndex} (${d.id ?? 'no id'})`;
}

export function delegatesOf(pte: { program: PteFile['program'] }, filter: (d: BackendDelegate) => boolean = () => true): DelegateRef[] {
  const out: DelegateRef[] = [];
  pte.program.executionPlan.forEach((plan, planIndex) =>
    plan.delegates.forEach((delegate, delegateIndex) => {
      if (filter(delegate))
        out.push({ planIndex, plan, delegateIndex, delegate, location: delegateLocation(plan, planIndex, delegateIndex, delegate) });
    }),
  );
  return out;
}

export interface BlobPlace {
  location: 'inline' | 'segment';
  index: number;
  size: number;
  /** Absolute file offset for a segment; undefined inline. */
  fileOffset?: number;
}

/** Where a delegate's processed data lives, refusing dangling references. */
export function blobPlace(pte: PteFile, ref: DelegateRef): BlobPlace {
  const p = ref.delegate.processed;
  if (!p) throw new TrtxError('PTE_DELEGATE_DATA', `${ref.location} > processed`, 'delegate has no processed data reference');
  if (p.location === DataLocation.INLINE) {
    const d = pte.program.backendDelegateData[p.index];
    if (!d)
      throw new TrtxError(
        'PTE_DELEGATE_DATA',
        `${ref.location} > processed`,
        `inline data index ${p.index} is outside backend_delegate_data[${pte.program.backendDelegateData.length}]`,
      );
    return { location: 'inline', index: p.index, size: d.data.length };
  }
  if (p.location === DataLocation.SEGMENT) {
    const s = pte.segments[p.index];
    if (!s)
      throw new TrtxError(
        'PTE_DELEGATE_DATA',
        `${ref.location} > processed`,
        `segment index ${p.index} is outside segments[${pte.segments.length}]`,
      );
    return { location: 'segment', index: p.index, size: s.size, fileOffset: s.offset };
  }
  throw new TrtxError('PTE_DELEGATE_DATA', `${ref.location} > processed.location`, `unknown data location ${String(p.location)}`);
}

/** Reads a TensorRT blob's header and metadata (two small reads for a segment), once per blob of the file (blob-once.ts). */
export async function readDelegateBlob(pte: PteFile, ref: DelegateRef): Promise<ParsedBlob> {
  const place = blobPlace(pte, ref);
  if (place.location === 'inline') {
    const bytes = itemAt(pte.program.backendDelegateData, place.index, 'backend_delegate_data').data;
    const read = (offset: number, length: number) => Promise.resolve(bytes.subarray(offset, offset + length));
    return blobOnce(pte, { key: `inline ${place.index}`, size: place.size, bytes, read }, ref.location);
  }
  const at = place.fileOffset!;
  const read = (offset: number, length: number) => pte.readRange(at + offset, length);
  return blobOnce(pte, { key: `segment ${at}+${place.size}`, size: place.size, bytes: null, read }, ref.location);
}

/** The DelegateCall instructions of a method that call `delegateIndex`. */
export function callsOf(
  plan: ExecutionPlan,
  delegateIndex: number,
): { chain: number; instruction: number; call: Extract<Instruction, { type: 'DelegateCall' }> }[] {
  const out: { chain: number; instruction: number; call: Extract<Instruction, { type: 'DelegateCall' }> }[] = [];
  plan.chains.forEach((c, chain) =>
    c.instructions.forEach((ins, instruction) => {
      if (ins.type === 'DelegateCall' && ins.delegateIndex === delegateIndex) out.push({ chain, instruction, call: ins });
    }),
  );
  return out;
}

/** callsOf for every delegate of a plan in one pass over its instructions (a report over all of them stays linear). */
export function callsByDelegate(plan: ExecutionPlan): Map<number, ReturnType<typeof callsOf>> {
  const out = new Map<number, ReturnType<typeof callsOf>>();
  plan.chains.forEach((c, chain) =>
    c.instructions.forEach((ins, instruction) => {
      if (ins.type !== 'DelegateCall') return;
      const list = out.get(ins.delegateIndex);
      if (list) list.push({ chain, instruction, call: ins });
      else out.set(ins.delegateIndex, [{ chain, instruction, call: ins }]);
    }),
  );
  return out;
}

export type OrError<T> = T | { error: string };

export interface DelegateReadout {
  place: OrError<BlobPlace>;
  /** The parsed TensorRT blob; null for another backend. */
  blob: OrError<ParsedBlob> | null;
}

/**
 * Where a delegate's data lives and, for TensorRT, its blob, with a refusal
 * turned into its one-line text: for reports (inspect, diff) that describe a
 * broken file rather than stop at its first problem.
 */
export async function readDelegate(pte: PteFile, ref: DelegateRef): Promise<DelegateReadout> {
  const text = (e: unknown) => {
    if (e instanceof TrtxError) return { error: e.oneLine() };
    throw e;
  };
  let place: OrError<BlobPlace>;
  try {
    place = blobPlace(pte, ref);
  } catch (e) {
    place = text(e);
  }
  let blob: OrError<ParsedBlob> | null = null;
  if (isTensorRT(ref.delegate)) {
    try {
      blob = await readDelegateBlob(pte, ref);
    } catch (e) {
      blob = text(e);
    }
  }
  return { place, blob };
}
