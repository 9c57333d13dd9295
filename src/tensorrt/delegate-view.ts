// One typed view of what trtx reads from a TensorRT delegate, shared by the
// passes, the checks and the analysis so that each fact is read once per
// program state:
//   - specView: a delegate's compile specs decoded once per spec list. The
//     memo is keyed by the list itself and checked against its entries on
//     every hit, so a pass that edits the specs (setSpec and removeSpec return
//     a new list; a test may push onto one or swap an entry's value) gets a
//     fresh view, never a stale one. Spec bytes are never written in place.
//   - programBudgets: the budgets the program's engines carry and the total
//     that may be resident, memoized per program and rebuilt when any
//     delegate's view changed.
//   - readDelegateBlobs: every TensorRT blob's header and metadata of an
//     opened file, read once by the caller that owns the file (the pipeline
//     reads them for its passes and its checks). Passes never change a blob
//     or where a delegate's data lives; a delegate whose `processed` reference
//     differs from the one read is read anew.
// Locations: the view decodes with no location prefix; a reader puts the
// delegate's location in front (specDiagnosticsAt), exactly what decoding
// with the prefix would give (compile-specs.ts passes it through unchanged).

import type { BackendDelegate, Program } from '../pte/model.js';
import type { PteFile } from '../pte/open.js';
import { planName } from '../pte/tensor.js';
import { TrtxError } from '../util/errors.js';
import type { ParsedBlob } from './blob.js';
import {
  SPEC_WEIGHT_STREAMING_BUDGET,
  decodeBudget,
  decodeCompileSpecs,
  showBytes,
  zeroCopyStampOf,
  type CompileSpecEntry,
  type SpecDiagnostic,
  type TypedCompileSpecs,
  type ZeroCopyStamp,
} from './compile-specs.js';
import { delegatesOf, isTensorRT, readDelegateBlob, type DelegateRef } from './delegates.js';
import { residentBudget, type EngineBudget, type ResidentBudget } from './resident.js';
import { sharedKvCacheOf } from './shared-kv-cache.js';

/** A budget as found or left: absent (automatic), a value, or bytes that do not parse. */
export type BudgetState = { kind: 'automatic' } | { kind: 'bytes'; bytes: bigint } | { kind: 'invalid'; raw: string };

/** The shared_kv_cache spec: the names it lists, a value that does not parse (location-free), or null (absent). */
export type SharedKvCacheRead = { names: string[] } | { error: TrtxError } | null;

export interface SpecView {
  /** The specs trtx owns, typed as the whole list reads (a repeated budget has no value). */
  specs: TypedCompileSpecs;
  /** decodeCompileSpecs's findings, located under the delegate (`compile_specs[1] (key)`). */
  diagnostics: readonly SpecDiagnostic[];
  /** The budget as its first entry reads, the entry the budget pass reports and replaces. */
  budget: BudgetState;
  /** How many entries carry the budget key (more than 1 is a repeated key). */
  budgetEntries: number;
  /** The zero_copy_kv stamp as the runtime reads it (zeroCopyStampOf). */
  zeroCopy: ZeroCopyStamp;
  sharedKvCache: SharedKvCacheRead;
}

interface SpecMemo {
  entries: { entry: CompileSpecEntry; key: string | null; value: Uint8Array }[];
  view: SpecView;
}

const specMemo = new WeakMap<readonly CompileSpecEntry[], SpecMemo>();

function stillMatches(specs: readonly CompileSpecEntry[], memo: SpecMemo): boolean {
  return (
    specs.length === memo.entries.length &&
    memo.entries.every((m, i) => specs[i] === m.entry && m.entry.key === m.key && m.entry.value === m.value)
  );
}

function budgetStateOf(specs: readonly CompileSpecEntry[], typed: TypedCompileSpecs): { budget: BudgetState; budgetEntries: number } {
  const entries = specs.filter((s) => s.key === SPEC_WEIGHT_STREAMING_BUDGET);
  const [first] = entries;
  if (first === undefined) return { budget: { kind: 'automatic' }, budgetEntries: 0 };
  // One entry: the whole list's reading is the first entry's. Repeated, the
  // list has no budget (Torch-TensorRT refuses it) but the first still reads.
  let bytes = typed.weightStreamingBudget;
  if (entries.length > 1) {
    try {
      bytes = decodeBudget(first.value);
    } catch (e) {
      if (!(e instanceof TrtxError)) throw e;
      bytes = undefined;
    }
  }
  const budget: BudgetState = bytes !== undefined ? { kind: 'bytes', bytes } : { kind: 'invalid', raw: showBytes(first.value) };
  return { budget, budgetEntries: entries.length };
}

function sharedKvCacheRead(specs: readonly CompileSpecEntry[]): SharedKvCacheRead {
  try {
    const names = sharedKvCacheOf(specs);
    return names === null ? null : { names };
  } catch (e) {
    if (!(e instanceof TrtxError)) throw e;
    return { error: e };
  }
}

function decodeView(specs: readonly CompileSpecEntry[]): SpecView {
  const { specs: typed, diagnostics } = decodeCompileSpecs(specs);
  return {
    specs: typed,
    diagnostics,
    ...budgetStateOf(specs, typed),
    zeroCopy: zeroCopyStampOf(specs),
    sharedKvCache: sharedKvCacheRead(specs),
  };
}

/** The typed view of a delegate's compile specs, decoded once per spec list. */
export function specView(delegate: Pick<BackendDelegate, 'compileSpecs'>): SpecView {
  const specs = delegate.compileSpecs;
  const memo = specMemo.get(specs);
  if (memo !== undefined && stillMatches(specs, memo)) return memo.view;
  const view = decodeView(specs);
  specMemo.set(specs, { entries: specs.map((entry) => ({ entry, key: entry.key, value: entry.value })), view });
  return view;
}

/** The view's findings located under `location` (a delegate's), as decodeCompileSpecs with that prefix reports them. */
export function specDiagnosticsAt(view: SpecView, location: string): SpecDiagnostic[] {
  return view.diagnostics.map((d) => (location ? { ...d, location: `${location} > ${d.location}` } : { ...d }));
}

// ---------------------------------------------------------------------------
// The program's budgets

export interface ProgramBudgets {
  /** Every TensorRT delegate that carries a budget the runtime reads (a repeated budget is refused at load: none). */
  engines: EngineBudget[];
  /** What may be resident at once, when more than one engine carries a budget. */
  resident: ResidentBudget | null;
}

const budgetMemo = new WeakMap<Program, { views: SpecView[]; budgets: ProgramBudgets }>();

/** The budgets of `program`'s TensorRT engines and their resident total (one wording for the pass and the check). */
export function programBudgets(program: Program): ProgramBudgets {
  const refs = delegatesOf({ program }, isTensorRT);
  const views = refs.map((r) => specView(r.delegate));
  const memo = budgetMemo.get(program);
  if (memo !== undefined && memo.views.length === views.length && memo.views.every((v, i) => v === views[i])) return memo.budgets;
  const engines: EngineBudget[] = [];
  refs.forEach((ref, i) => {
    const budget = views[i]?.specs.weightStreamingBudget;
    if (budget !== undefined) engines.push({ method: planName(ref.plan, ref.planIndex), budget });
  });
  const budgets = { engines, resident: engines.length > 1 ? residentBudget(engines) : null };
  budgetMemo.set(program, { views, budgets });
  return budgets;
}

// ---------------------------------------------------------------------------
// The blobs of an opened file

/** One TensorRT delegate's blob as read: its header and metadata, or the refusal that stopped the read. */
export type BlobRead = { blob: ParsedBlob } | { error: TrtxError };

interface BlobEntry {
  planIndex: number;
  delegateIndex: number;
  /** The delegate's processed reference when it was read. */
  processed: BackendDelegate['processed'];
  read: BlobRead;
}

/** Every TensorRT blob of an opened file, read once; see readDelegateBlobs. */
export interface DelegateBlobs {
  /** In delegatesOf order. */
  readonly entries: readonly (BlobEntry & { ref: DelegateRef })[];
}

const sameProcessed = (a: BackendDelegate['processed'], b: BackendDelegate['processed']) =>
  a === b || (a !== null && b !== null && a.location === b.location && a.index === b.index);

/** Reads one blob, a refusal (TrtxError) kept as the read's result. */
export async function readBlob(pte: PteFile, ref: DelegateRef): Promise<BlobRead> {
  try {
    return { blob: await readDelegateBlob(pte, ref) };
  } catch (e) {
    if (!(e instanceof TrtxError)) throw e;
    return { error: e };
  }
}

/** Every TensorRT delegate's blob header and metadata (never an engine), refusals kept per delegate. */
export async function readDelegateBlobs(pte: PteFile): Promise<DelegateBlobs> {
  const entries: DelegateBlobs['entries'][number][] = [];
  for (const ref of delegatesOf(pte, isTensorRT)) {
    const { planIndex, delegateIndex } = ref;
    entries.push({ ref, planIndex, delegateIndex, processed: ref.delegate.processed, read: await readBlob(pte, ref) });
  }
  return { entries };
}

/** The read of `ref`'s blob in `blobs`, or a fresh read where `blobs` has none for it or its data reference changed. */
export async function blobOf(pte: PteFile, ref: DelegateRef, blobs: DelegateBlobs | undefined): Promise<BlobRead> {
  const known = blobs?.entries.find((e) => e.planIndex === ref.planIndex && e.delegateIndex === ref.delegateIndex);
  if (known !== undefined && sameProcessed(known.processed, ref.delegate.processed)) return known.read;
  return readBlob(pte, ref);
}
