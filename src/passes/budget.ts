// Sets, replaces or removes the baked weight-streaming budget on TensorRT
// delegates, optionally narrowed to one method and/or one delegate index.
// Only the `weight_streaming_budget` entry of a selected delegate changes:
// other specs keep their bytes and order, other backends are not looked at.
// A repeated budget key collapses into one entry at the first one's place.

import type { Program } from '../pte/model.js';
import { planName } from '../pte/tensor.js';
import { SPEC_WEIGHT_STREAMING_BUDGET, encodeBudget, removeSpec, setSpec } from '../tensorrt/compile-specs.js';
import { programBudgets, specView, type BudgetState } from '../tensorrt/delegate-view.js';
import { delegatesOf, isTensorRT, type DelegateRef } from '../tensorrt/delegates.js';
import type { ResidentBudget } from '../tensorrt/resident.js';
import { TrtxError } from '../util/errors.js';
import { formatIEC } from '../util/size.js';
import type { Pass, PassReport } from './pass.js';
import type { BudgetDetails } from './details-json.js';

export interface BudgetRequest {
  /** Bytes to bake, or null to remove the spec (automatic budget). */
  budget: bigint | null;
  /** Only delegates of this method. */
  method?: string;
  /** Only the delegate with this index (in each selected method). */
  delegate?: number;
}

export type { BudgetState } from '../tensorrt/delegate-view.js';

export interface BudgetEdit {
  method: string;
  delegate: number;
  location: string;
  before: BudgetState;
  /** How many entries carried the key before (more than 1 is a repeated key). */
  entriesBefore: number;
  after: BudgetState;
  changed: boolean;
}

export interface BudgetResult {
  edits: BudgetEdit[];
  changed: boolean;
  /** Over the whole program after the edit, when more than one engine carries a budget. */
  resident: ResidentBudget | null;
}

const key = SPEC_WEIGHT_STREAMING_BUDGET;

export function describeBudget(s: BudgetState): string {
  if (s.kind === 'automatic') return 'automatic';
  if (s.kind === 'invalid') return `invalid ${s.raw}`;
  return `${formatIEC(s.bytes)} (${s.bytes} bytes)`;
}

/** The delegates a request selects, refusing names and indices that do not exist (usage) and selections with no TensorRT delegate (check). */
export function selectBudgetTargets(program: Program, req: Omit<BudgetRequest, 'budget'>): DelegateRef[] {
  const methods = program.executionPlan.map((p, i) => planName(p, i));
  if (req.method !== undefined && !methods.includes(req.method)) {
    throw new TrtxError(
      'BUDGET_METHOD_UNKNOWN',
      '--method',
      `no method named ${JSON.stringify(req.method)}; the program has ${methods.map((m) => JSON.stringify(m)).join(', ') || 'none'}`,
      {
        hint: 'run `trtx inspect FILE` to list methods and delegates',
      },
    );
  }
  const inMethod = delegatesOf({ program }).filter((r) => req.method === undefined || planName(r.plan, r.planIndex) === req.method);
  if (req.delegate !== undefined) {
    if (!Number.isSafeInteger(req.delegate) || req.delegate < 0) {
      throw new TrtxError('BUDGET_DELEGATE_UNKNOWN', '--delegate', `delegate index ${req.delegate} is not a non-negative integer`);
    }
    if (!inMethod.some((r) => r.delegateIndex === req.delegate)) {
      throw new TrtxError(
        'BUDGET_DELEGATE_UNKNOWN',
        '--delegate',
        `no delegate ${req.delegate}${req.method !== undefined ? ` in method ${JSON.stringify(req.method)}` : ' in any method'}`,
        {
          hint: 'run `trtx inspect FILE` to list methods and delegates',
        },
      );
    }
  }
  const selected = inMethod.filter((r) => req.delegate === undefined || r.delegateIndex === req.delegate);
  const trt = selected.filter((r) => isTensorRT(r.delegate));
  if (trt.length === 0) {
    const flags = [
      req.method !== undefined ? `--method ${req.method}` : null,
      req.delegate !== undefined ? `--delegate ${req.delegate}` : null,
    ]
      .filter(Boolean)
      .join(' ');
    const what = flags
      ? `the selection (${flags}) has no TensorRT delegate to carry a weight-streaming budget; it holds ${selected.map((r) => r.location).join(', ')}`
      : `the program has no TensorRT delegate to carry a weight-streaming budget${selected.length ? `; it holds ${selected.map((r) => r.location).join(', ')}` : ''}`;
    throw new TrtxError('BUDGET_NO_TENSORRT_DELEGATE', flags || 'program', what, {
      hint: 'the budget applies to TensorRTBackend delegates only; list them with `trtx inspect FILE`',
    });
  }
  return trt;
}

/** Applies the request to `program` (mutating its delegates' compile specs). */
export function applyBudget(program: Program, req: BudgetRequest): BudgetResult {
  const targets = selectBudgetTargets(program, req);
  const value = req.budget === null ? null : encodeBudget(req.budget);
  const edits: BudgetEdit[] = targets.map((ref) => {
    const d = ref.delegate;
    const { budget: before, budgetEntries: entriesBefore } = specView(d);
    const old = d.compileSpecs;
    d.compileSpecs = value === null ? removeSpec(old, key) : setSpec(old, key, value);
    const changed =
      old.length !== d.compileSpecs.length ||
      old.some((s, i) => {
        const now = d.compileSpecs[i];
        return now === undefined || s.key !== now.key || !Buffer.from(s.value).equals(Buffer.from(now.value));
      });
    return {
      method: planName(ref.plan, ref.planIndex),
      delegate: ref.delegateIndex,
      location: ref.location,
      before,
      entriesBefore,
      after: specView(d).budget,
      changed,
    };
  });
  // The same total, from the same views, as the check on the result reports.
  return { edits, changed: edits.some((e) => e.changed), resident: programBudgets(program).resident };
}

export function describeBudgetEdit(e: BudgetEdit): string {
  if (!e.changed) return `${e.location}: weight_streaming_budget already ${describeBudget(e.after)}, unchanged`;
  const repeated = e.entriesBefore > 1 ? ` (${e.entriesBefore} entries collapsed into one)` : '';
  return `${e.location}: weight_streaming_budget ${describeBudget(e.before)} -> ${describeBudget(e.after)}${repeated}`;
}

/** The rewrite pass for `--budget SIZE` / `--clear-budget`. */
export function budgetPass(req: BudgetRequest): Pass {
  return (program): PassReport => {
    const r = applyBudget(program, req);
    const json = (s: BudgetState) => (s.kind === 'bytes' ? { kind: s.kind, bytes: s.bytes.toString() } : s);
    return {
      pass: 'budget',
      changed: r.changed,
      lines: r.edits.map(describeBudgetEdit),
      // The total that may be resident is reported by the checks that run on
      // the result (TRT_BUDGET_MULTI_ENGINE), once, whatever pass set it.
      warnings: [],
      details: {
        budget: req.budget === null ? null : req.budget.toString(),
        edits: r.edits.map((e) => ({
          method: e.method,
          delegate: e.delegate,
          location: e.location,
          before: json(e.before),
          after: json(e.after),
          changed: e.changed,
        })),
        resident: r.resident && { engines: r.resident.engines, total_bytes: r.resident.total.toString(), line: r.resident.line },
      } satisfies BudgetDetails,
    };
  };
}
