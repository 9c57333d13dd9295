// A built fixture program seen in its spec's names, so a test compares two
// programs structurally: instruction lines, tensor placements, delegates.
import { memoryOffset, type EValue } from '../../src/pte/model.js';
import { DataLocation, DeviceType } from '../../src/pte/model.js';
import { parseBlob } from '../../src/tensorrt/blob.js';
import type { BuiltProgram } from '../../src/examples/builder.js';

export interface TensorView {
  name: string;
  arena: number | null;
  offset: bigint | null;
  device: string;
  fqn: string | null;
  sizes: number[];
}

export interface DelegateView {
  id: string;
  specs: [string, string][];
  blob: Uint8Array;
}

export interface MethodView {
  instructions: string[];
  tensors: Map<string, TensorView>;
  delegates: Map<string, DelegateView>;
  inputs: string[];
  outputs: string[];
  operators: string[];
  arenaSizes: bigint[];
  deviceEntries: string[];
}

const td = new TextDecoder();

function literal(v: EValue): string {
  switch (v.type) {
    case 'Bool':
      return String(v.boolVal);
    case 'Int':
      return String(v.intVal);
    case 'Double':
      return String(v.doubleVal);
    case 'Null':
      return 'None';
    default:
      return `<${v.type}>`;
  }
}

/** The bytes of a delegate's processed data in a built program. */
export function delegateBytes(built: BuiltProgram, plan: number, delegate: number): Uint8Array {
  const d = built.program.executionPlan[plan].delegates[delegate];
  if (d.processed!.location === DataLocation.SEGMENT) {
    const s = built.segments[d.processed!.index];
    if (s.kind !== 'bytes') throw new Error('file segment');
    return s.bytes;
  }
  return built.program.backendDelegateData[d.processed!.index].data;
}

export function viewMethod(built: BuiltProgram, method: string): MethodView {
  const idx = built.index.get(method);
  if (!idx) throw new Error(`no method ${method}`);
  const plan = built.program.executionPlan[idx.plan];
  const name = (i: number) => idx.names[i] ?? literal(plan.values[i]);
  const delegateNames = new Map([...idx.delegates].map(([n, i]) => [i, n]));
  const instructions = plan.chains[0].instructions.map((ins) => {
    if (ins.type === 'KernelCall') {
      const op = plan.operators[ins.opIndex];
      return `${op.name}.${op.overload}(${ins.args.map(name).join(', ')})`;
    }
    if (ins.type === 'DelegateCall') return `delegate ${delegateNames.get(ins.delegateIndex)}(${ins.args.map(name).join(', ')})`;
    return ins.type;
  });
  const tensors = new Map<string, TensorView>();
  plan.values.forEach((v, i) => {
    if (v.type !== 'Tensor' || idx.names[i] === null) return;
    const t = v.tensor;
    const extra = t.extraTensorInfo;
    tensors.set(idx.names[i], {
      name: idx.names[i],
      arena: t.allocationInfo ? t.allocationInfo.memoryId : null,
      offset: t.allocationInfo ? memoryOffset(t.allocationInfo) : null,
      device: extra && extra.deviceType === DeviceType.CUDA ? `cuda:${extra.deviceIndex}` : 'cpu',
      fqn: extra?.fullyQualifiedName ?? null,
      sizes: t.sizes,
    });
  });
  const delegates = new Map<string, DelegateView>();
  plan.delegates.forEach((d, i) => {
    delegates.set(delegateNames.get(i)!, {
      id: d.id ?? '',
      specs: d.compileSpecs.map((c) => [c.key ?? '', td.decode(c.value)]),
      blob: delegateBytes(built, idx.plan, i),
    });
  });
  return {
    instructions,
    tensors,
    delegates,
    inputs: plan.inputs.map(name),
    outputs: plan.outputs.map(name),
    operators: plan.operators.map((o) => `${o.name}.${o.overload}`),
    arenaSizes: plan.nonConstBufferSizes,
    deviceEntries: plan.nonConstBufferDevice.map(
      (e) => `${e.bufferIdx}:${e.deviceType === DeviceType.CUDA ? 'cuda' : 'cpu'}:${e.deviceIndex}`,
    ),
  };
}

/** Sizes of the tensors a delegate's first DelegateCall in `method` passes, in argument order. */
export function callArgSizes(built: BuiltProgram, method: string, delegate: string): number[][] {
  const idx = built.index.get(method)!;
  const plan = built.program.executionPlan[idx.plan];
  const d = idx.delegates.get(delegate);
  const call = plan.chains[0].instructions.find((ins) => ins.type === 'DelegateCall' && ins.delegateIndex === d);
  if (!call || call.type !== 'DelegateCall') throw new Error(`no call to ${delegate} in ${method}`);
  return call.args.map((a) => {
    const v = plan.values[a];
    return v.type === 'Tensor' ? v.tensor.sizes : [];
  });
}

/** Parsed metadata of a delegate's blob. */
export function blobMeta(d: DelegateView) {
  return parseBlob(d.blob);
}

/** Lines of `a` not in `b` and lines of `b` not in `a` (multiset difference, order kept). */
export function lineDiff(a: string[], b: string[]): { removed: string[]; added: string[] } {
  const rest = [...b];
  const removed: string[] = [];
  for (const l of a) {
    const i = rest.indexOf(l);
    if (i >= 0) rest.splice(i, 1);
    else removed.push(l);
  }
  return { removed, added: rest };
}
