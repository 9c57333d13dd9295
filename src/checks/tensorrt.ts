// Checks of each TensorRT delegate against the program around it: its
// compile specs, the arity of every DelegateCall against the blob's
// io_bindings, each argument's dtype and shape against its binding (when the
// blob records them; the real export does not), the
// devices of its tensors and the blob's `device_id` against `target_device`,
// and the budget total of a
// program with several engines. Blob refusals themselves come from the codec
// (context.ts records them); this file sees only blobs that parsed.

import type { TrtCheckCode } from '../codes/index.js';
import type { ExecutionPlan, Tensor } from '../pte/model.js';
import { DeviceType, ScalarType } from '../pte/model.js';
import { arenaDevice, deviceLabel, planName, scalarTypeName, valueLabel, type DevicePlace } from '../pte/tensor.js';
import { aliasedOutputs, bindingLabel, inputs, outputs, type IoBinding } from '../tensorrt/blob.js';
import { programBudgets, specDiagnosticsAt, specView } from '../tensorrt/delegate-view.js';
import { callsOf, delegatesOf, isTensorRT, type DelegateRef } from '../tensorrt/delegates.js';
import { canonicalTargetDevice, type TargetDevice } from '../tensorrt/target-device.js';
import type { CheckContext, TrtDelegate } from './context.js';
import { diag, type Diagnostic } from './diagnostic.js';
import { METADATA_FILE_LIMIT_HINT } from '../tensorrt/blob-once.js';
import { SHARED_SEGMENT_HINT, sharedBlobChecks } from './shared-blobs.js';
import {
  BUDGET_STREAMS_NOTHING_HINT,
  REFERENCE_EXTERNAL_WEIGHT_HINT,
  REFERENCE_PROGRAM_ARITY_HINT,
  REFERENCE_PROGRAM_DELEGATED_HINT,
} from './standin-engines.js';
import { SCALAR_TYPE_CODE } from '../util/dtype.js';
import { itemAt } from '../util/present.js';
import type { ReportBudget } from '../util/report-budget.js';

const HINTS = {
  TRT_ARITY:
    're-export the program: the runtime accepts inputs + outputs arguments (staged) or inputs + outputs - aliased (zero-copy), nothing else',
  TRT_ARG_NOT_TENSOR: 're-export the program; every TensorRT binding takes a tensor',
  TRT_ARG_DTYPE: 're-export the program; the engine would read or write the tensor with the wrong element type',
  TRT_ARG_SHAPE: 're-export the program; the engine was built for another shape',
  TRT_BINDING_DTYPE_UNKNOWN: "nothing to do unless the engine misbehaves; trtx could not compare this binding's dtype",
  TRT_DEVICE_MISMATCH: 're-export for one device, or plan the tensor on the target_device',
  TRT_DEVICE_ID_MISMATCH:
    "re-export the partition: the engine must be built on the device its target_device names (the blob's device_id is where Torch-TensorRT runs it)",
  TRT_BUDGET_MULTI_ENGINE:
    'each engine may hold its own budget: make the total fit the GPU (`trtx rewrite --budget SIZE`) or leave it automatic (`--clear-budget`)',
  TRT_REFERENCE_PROGRAM_ARITY: REFERENCE_PROGRAM_ARITY_HINT,
  TRT_REFERENCE_EXTERNAL_WEIGHT: REFERENCE_EXTERNAL_WEIGHT_HINT,
  TRT_REFERENCE_PROGRAM_DELEGATED: REFERENCE_PROGRAM_DELEGATED_HINT,
  TRT_BUDGET_STREAMS_NOTHING: BUDGET_STREAMS_NOTHING_HINT,
  TRT_SHARED_SEGMENT: SHARED_SEGMENT_HINT,
  TRT_METADATA_FILE_LIMIT: METADATA_FILE_LIMIT_HINT,
} as const satisfies Record<TrtCheckCode, string>;

export type TensorRTCode = keyof typeof HINTS;
export const TENSORRT_CODES = Object.keys(HINTS) as TensorRTCode[];

// The blob's dtype strings (torch names, as Torch-TensorRT writes them): the
// data types trtx moves (util/dtype.ts, pinned to the schema's enum by
// test/tensor-file.test.ts), then the rarer ones and the legacy aliases.
const DTYPES: Record<string, ScalarType> = {
  ...(SCALAR_TYPE_CODE as Readonly<Record<string, ScalarType>>),
  uint16: ScalarType.UINT16,
  uint32: ScalarType.UINT32,
  uint64: ScalarType.UINT64,
  float8_e5m2: ScalarType.FLOAT8E5M2,
  float8_e4m3fn: ScalarType.FLOAT8E4M3FN,
  half: ScalarType.HALF,
  float: ScalarType.FLOAT,
  double: ScalarType.DOUBLE,
  long: ScalarType.LONG,
  int: ScalarType.INT,
};

/** The scalar type a binding's dtype string names; null when unknown. */
export function dtypeScalarType(dtype: string): ScalarType | null {
  const name = dtype.startsWith('torch.') ? dtype.slice(6) : dtype;
  return Object.hasOwn(DTYPES, name) ? (DTYPES[name] ?? null) : null;
}

/** A dimension of -1 in a binding is dynamic and matches any size. */
export function shapeAgrees(binding: readonly number[], sizes: readonly number[]): boolean {
  return binding.length === sizes.length && binding.every((d, i) => d < 0 || d === sizes[i]);
}

function specChecks(ref: DelegateRef, out: Diagnostic[], budget: ReportBudget): TargetDevice | undefined {
  const view = specView(ref.delegate);
  const where = { method: planName(ref.plan, ref.planIndex), delegate: ref.delegateIndex };
  for (const d of specDiagnosticsAt(view, ref.location)) out.push(diag(budget, d.severity, d.code, d.location, d.message, d.hint, where));
  return view.specs.target;
}

/** Devices a tensor claims: its tag and, when planned, its arena's. */
function claimedDevices(plan: ExecutionPlan, t: Tensor): { source: string; place: DevicePlace }[] {
  const out: { source: string; place: DevicePlace }[] = [];
  const x = t.extraTensorInfo;
  if (x && x.deviceType === DeviceType.CUDA) out.push({ source: 'device tag', place: { type: 'cuda', index: x.deviceIndex } });
  if (t.allocationInfo && t.allocationInfo.memoryId > 0 && t.allocationInfo.memoryId < plan.nonConstBufferSizes.length) {
    const place = arenaDevice(plan, t.allocationInfo.memoryId);
    if (place.type === 'cuda') out.push({ source: `arena ${t.allocationInfo.memoryId}`, place });
  }
  return out;
}

/** What the checks of one delegate's calls share: where they report and what they compare against. */
interface CallSite {
  d: TrtDelegate;
  plan: ExecutionPlan;
  where: { method: string; delegate: number };
  site: string;
  target: TargetDevice | undefined;
  out: Diagnostic[];
  budget: ReportBudget;
}

function callChecks(d: TrtDelegate, target: TargetDevice | undefined, out: Diagnostic[], budget: ReportBudget): void {
  const { plan } = d;
  const where = { method: planName(plan, d.planIndex), delegate: d.delegateIndex };
  const ins = inputs(d.blob.metadata);
  const outs = outputs(d.blob.metadata);
  const aliased = new Set(aliasedOutputs(d.blob.metadata).map((b) => b.name));
  const staged = ins.length + outs.length;
  const zeroCopy = staged - aliased.size;

  for (const { chain, instruction, call } of callsOf(plan, d.delegateIndex)) {
    const site = `chain ${chain} instruction ${instruction}`;
    const n = call.args.length;
    let bound: IoBinding[];
    if (n === staged) bound = [...ins, ...outs];
    else if (aliased.size > 0 && n === zeroCopy) bound = [...ins, ...outs.filter((b) => !aliased.has(b.name))];
    else {
      const want =
        aliased.size > 0
          ? `${staged} (staged: ${ins.length} inputs + ${outs.length} outputs) or ${zeroCopy} (zero-copy: minus ${aliased.size} aliased outputs)`
          : `${staged} (${ins.length} inputs + ${outs.length} outputs)`;
      out.push(
        diag(
          budget,
          'error',
          'TRT_ARITY',
          `${d.location} > ${site}`,
          `DelegateCall to delegate ${d.delegateIndex} (${d.delegate.id}) has ${n} arguments; its io_bindings want ${want}`,
          HINTS.TRT_ARITY,
          where,
        ),
      );
      continue;
    }
    const at: CallSite = { d, plan, where, site, target, out, budget };
    // `bound` was chosen for this call's argument count: argument k is there.
    bound.forEach((b, k) => argumentChecks(at, b, k, itemAt(call.args, k, `arguments of the call at ${site}`)));
  }
}

/** Argument `k` (value `v`) of a call against its binding `b`: a tensor, of the binding's dtype and shape where recorded, on the target device. */
function argumentChecks(s: CallSite, b: IoBinding, k: number, v: number): void {
  const { d, plan, where, out, budget } = s;
  const at = `${d.location} > binding ${bindingLabel(b.name)}`;
  const arg = `argument ${k} (${valueLabel(plan, v)}) at ${s.site}`;
  const value = plan.values[v];
  if (!value) return; // an index out of range is structure.ts's finding
  if (value.type !== 'Tensor') {
    out.push(
      diag(
        budget,
        'error',
        'TRT_ARG_NOT_TENSOR',
        at,
        `${arg} is a ${value.type} value; ${b.is_input ? 'input' : 'output'} binding ${JSON.stringify(b.name)} takes a tensor`,
        HINTS.TRT_ARG_NOT_TENSOR,
        where,
      ),
    );
    return;
  }
  const t = value.tensor;
  // The real export records names only (dtype "", shape []: backend.py
  // preprocess), so each field is compared only when it was recorded.
  if (b.dtype !== '') dtypeCheck(s, b, t, at, arg);
  if (b.shape.length > 0 && !shapeAgrees(b.shape, t.sizes)) {
    out.push(
      diag(
        budget,
        'error',
        'TRT_ARG_SHAPE',
        at,
        `${arg} has shape [${t.sizes.join(', ')}]; the binding is [${b.shape.join(', ')}]`,
        HINTS.TRT_ARG_SHAPE,
        where,
      ),
    );
  }
  if (s.target !== undefined) deviceChecks(s, s.target, t, at, arg);
}

function dtypeCheck({ where, out, budget }: CallSite, b: IoBinding, t: Tensor, at: string, arg: string): void {
  const want = dtypeScalarType(b.dtype);
  if (want === null) {
    out.push(
      diag(
        budget,
        'warning',
        'TRT_BINDING_DTYPE_UNKNOWN',
        at,
        `binding dtype ${JSON.stringify(b.dtype)} is not one trtx knows; ${arg} was not compared`,
        HINTS.TRT_BINDING_DTYPE_UNKNOWN,
        where,
      ),
    );
  } else if (want !== t.scalarType) {
    out.push(
      diag(
        budget,
        'error',
        'TRT_ARG_DTYPE',
        at,
        `${arg} is ${scalarTypeName(t.scalarType).toLowerCase()}; the binding is ${b.dtype}`,
        HINTS.TRT_ARG_DTYPE,
        where,
      ),
    );
  }
}

/** A cpu target leaves every tensor on the host (PropagateDevicePass), so any device claim disagrees. */
function deviceChecks({ plan, where, out, budget }: CallSite, target: TargetDevice, t: Tensor, at: string, arg: string): void {
  for (const c of claimedDevices(plan, t)) {
    if (target.type === 'cpu' || c.place.index !== target.index) {
      out.push(
        diag(
          budget,
          'error',
          'TRT_DEVICE_MISMATCH',
          at,
          `${arg} is on ${deviceLabel(c.place)} (its ${c.source}); the delegate's target_device is ${canonicalTargetDevice(target)}`,
          HINTS.TRT_DEVICE_MISMATCH,
          where,
        ),
      );
    }
  }
}

/**
 * The blob's device_id against target_device. ExecuTorch places the
 * delegate's tensors by target_device (exir/passes/propagate_device_pass.py);
 * Torch-TensorRT never reads that spec and deserializes the engine on the
 * blob's device_id (its ExecuTorch runtime's init). Written by one export the
 * two agree; where they do not, the engine runs on one GPU with its I/O
 * planned on the other. A cpu target leaves the blob's device in charge.
 */
function deviceIdCheck(d: TrtDelegate, target: TargetDevice | undefined, out: Diagnostic[], budget: ReportBudget): void {
  if (target === undefined || target.type !== 'cuda') return;
  const id = d.blob.metadata.device_id;
  if (id === target.index) return;
  const where = { method: planName(d.plan, d.planIndex), delegate: d.delegateIndex };
  out.push(
    diag(
      budget,
      'error',
      'TRT_DEVICE_ID_MISMATCH',
      `${d.location} > metadata.device_id`,
      `the blob's device_id is ${id} but target_device is ${canonicalTargetDevice(target)}: ExecuTorch plans the delegate's tensors on ${canonicalTargetDevice(target)}, Torch-TensorRT runs the engine on device ${id}`,
      HINTS.TRT_DEVICE_ID_MISMATCH,
      where,
    ),
  );
}

export function checkTensorRT(ctx: Pick<CheckContext, 'pte' | 'trt'>): Diagnostic[] {
  const out: Diagnostic[] = [];
  const targets = new Map<string, TargetDevice | undefined>();
  for (const ref of delegatesOf(ctx.pte, isTensorRT))
    targets.set(`${ref.planIndex}/${ref.delegateIndex}`, specChecks(ref, out, ctx.pte.reportBudget));
  for (const d of ctx.trt) {
    const target = targets.get(`${d.planIndex}/${d.delegateIndex}`);
    deviceIdCheck(d, target, out, ctx.pte.reportBudget);
    callChecks(d, target, out, ctx.pte.reportBudget);
  }
  out.push(...sharedBlobChecks(ctx.pte, ctx.pte.reportBudget));
  const { resident: r } = programBudgets(ctx.pte.program);
  if (r !== null) {
    out.push(
      diag(
        ctx.pte.reportBudget,
        'warning',
        'TRT_BUDGET_MULTI_ENGINE',
        'program',
        `weight_streaming_budget applies per engine: ${r.line}`,
        HINTS.TRT_BUDGET_MULTI_ENGINE,
      ),
    );
  }
  return out;
}
