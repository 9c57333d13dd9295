// The memory plan of a program: each method's arenas with their device,
// every memory-planned tensor at its offset, the TensorRT delegates' bindings
// and aliases, and the host<->device staging copies. A model, not a picture:
// `inspect --html` and `diff --html` draw it (src/html/), and what a command
// prints about memory reads it too. Built from the decoded program and each blob's header and metadata
// (the same reads as `trtx inspect`); no segment body is ever read, so a
// 4 GiB program costs what a 40 KB one does.

import type { PteFile } from '../pte/open.js';
import type { ExecutionPlan } from '../pte/model.js';
import { arenaDevice, deviceLabel, placement, planName, scalarTypeName, tensorAt, tensorBytes, tensorName } from '../pte/tensor.js';
import { decodeCompileSpecs } from '../tensorrt/compile-specs.js';
import { canonicalTargetDevice } from '../tensorrt/target-device.js';
import { callsByDelegate, delegatesOf, readDelegate, type DelegateRef } from '../tensorrt/delegates.js';
import { D2H_COPY, H2D_COPY, stagingBytes } from '../graph/staging.js';
import { shortName, shortNameOrNull } from '../util/display.js';

export interface PlannedTensor {
  value: number;
  /** fully_qualified_name (mutable buffers), else null. */
  fqn: string | null;
  /** What the report calls it: the fqn, else a delegate binding it is fed to, else `%value`. */
  label: string;
  dtype: string;
  shape: number[];
  bytes: number;
  arena: number;
  offset: number;
  device: string;
  /** `input 0`, `output 1`, `decode delegate 0 input b_k`, `staged copy of ...`. */
  roles: string[];
}

export interface PlanArena {
  index: number;
  size: number;
  device: string;
  tensors: PlannedTensor[];
}

export interface StagingCopy {
  direction: 'host->device' | 'device->host';
  from: number;
  to: number;
  fromLabel: string;
  toLabel: string;
  bytes: number;
  /** `chain 0 instruction 3` */
  where: string;
}

export interface PlanBinding {
  binding: string;
  direction: 'input' | 'output';
  /** The value the call passes, or null for an elided (zero-copy) aliased output. */
  value: number | null;
  label: string | null;
}

export interface PlanDelegate {
  index: number;
  backend: string;
  /** The blob could not be read: why (the drawing still shows the method). */
  error: string | null;
  calls: number;
  zeroCopy: boolean;
  targetDevice: string | null;
  bindings: PlanBinding[];
  aliases: { output: string; input: string; kind: string; elided: boolean }[];
}

export interface MethodPlan {
  name: string;
  arenas: PlanArena[];
  /** Tensor values without a planned place (constants, unplanned inputs). */
  unplanned: number;
  copies: StagingCopy[];
  delegates: PlanDelegate[];
  staging: { host_to_device_bytes: number; device_to_host_bytes: number; copies: number };
}

export interface MemoryPlan {
  file: string;
  fileSize: number;
  methods: MethodPlan[];
}

function labelOf(plan: ExecutionPlan, value: number, bindingNames: Map<number, string>): string {
  const t = tensorAt(plan, value);
  return shortName((t && tensorName(t)) ?? bindingNames.get(value) ?? `%${value}`);
}

async function delegatesOfPlan(pte: PteFile, plan: ExecutionPlan, refs: readonly DelegateRef[]): Promise<PlanDelegate[]> {
  const out: PlanDelegate[] = [];
  const callsOfDelegate = callsByDelegate(plan);
  for (const ref of refs) {
    const { blob } = await readDelegate(pte, ref);
    const calls = callsOfDelegate.get(ref.delegateIndex) ?? [];
    const { specs } = decodeCompileSpecs(ref.delegate.compileSpecs, { location: ref.location });
    const d: PlanDelegate = {
      index: ref.delegateIndex,
      backend: ref.delegate.id ?? '(no id)',
      error: blob && 'error' in blob ? blob.error : null,
      calls: calls.length,
      zeroCopy: specs.zeroCopyKv !== undefined,
      targetDevice: specs.target === undefined ? null : canonicalTargetDevice(specs.target),
      bindings: [],
      aliases: [],
    };
    out.push(d);
    if (!blob || 'error' in blob) continue;
    const inputs = blob.metadata.io_bindings.filter((b) => b.is_input).map((b) => shortName(b.name));
    const outputs = blob.metadata.io_bindings.filter((b) => !b.is_input).map((b) => shortName(b.name));
    pte.reportBudget.chargeReport(inputs.length * 128 + outputs.length * 128, ref.location);
    const aliased = new Set(blob.metadata.aliased_io.map((a) => shortName(a.output)));
    const args = calls[0]?.call.args ?? [];
    // The runtime tells staged from zero-copy by arity alone
    // (docs/zero-copy-kv.md): inputs + outputs, or inputs + outputs - aliased
    // with the aliased outputs removed from the argument list.
    const elided = args.length === inputs.length + outputs.length - aliased.size && aliased.size > 0;
    const kept = elided ? outputs.filter((o) => !aliased.has(o)) : outputs;
    inputs.forEach((name, i) => d.bindings.push({ binding: name, direction: 'input', value: args[i] ?? null, label: null }));
    const keptAt = new Map<string, number>();
    kept.forEach((o, i) => keptAt.has(o) || keptAt.set(o, i));
    outputs.forEach((name) => {
      const k = keptAt.get(name) ?? -1;
      d.bindings.push({ binding: name, direction: 'output', value: k < 0 ? null : (args[inputs.length + k] ?? null), label: null });
    });
    d.aliases = blob.metadata.aliased_io.map((a) => ({
      output: shortName(a.output),
      input: shortName(a.input),
      kind: a.kind,
      elided: elided && aliased.has(shortName(a.output)),
    }));
  }
  return out;
}

async function methodPlan(pte: PteFile, planIndex: number, plan: ExecutionPlan, refs: readonly DelegateRef[]): Promise<MethodPlan> {
  const name = planName(plan, planIndex);
  const delegates = await delegatesOfPlan(pte, plan, refs);
  // A value may be listed as an input 100,000 times: roles are appended, and
  // each is charged to the report budget (src/util/report-budget.ts) as the
  // page will print it.
  const roles = new Map<number, string[]>();
  const addRole = (v: number, r: string) => {
    pte.reportBudget.chargeReport(r.length + 32, `${name} > value %${v}`);
    const list = roles.get(v);
    if (list) list.push(r);
    else roles.set(v, [r]);
  };
  plan.inputs.forEach((v, i) => addRole(v, `input ${i}`));
  plan.outputs.forEach((v, i) => addRole(v, `output ${i}`));
  const bindingNames = new Map<number, string>();
  for (const d of delegates) {
    for (const b of d.bindings) {
      if (b.value === null) continue;
      addRole(b.value, `delegate ${d.index} ${b.direction} ${b.binding}`);
      if (!bindingNames.has(b.value)) bindingNames.set(b.value, b.binding);
    }
  }
  for (const d of delegates) for (const b of d.bindings) b.label = b.value === null ? null : labelOf(plan, b.value, bindingNames);

  const copies: StagingCopy[] = [];
  plan.chains.forEach((chain, c) =>
    chain.instructions.forEach((ins, i) => {
      if (ins.type !== 'KernelCall') return;
      const op = plan.operators[ins.opIndex]?.name;
      if (op !== H2D_COPY && op !== D2H_COPY) return;
      const [from, to] = ins.args;
      // A copy call without both of its tensor arguments (only a malformed program) is not drawn.
      if (from === undefined || to === undefined) return;
      const src = tensorAt(plan, from);
      pte.reportBudget.chargeReport(256, `${name} > chain ${c} instruction ${i}`);
      copies.push({
        direction: op === H2D_COPY ? 'host->device' : 'device->host',
        from,
        to,
        fromLabel: labelOf(plan, from, bindingNames),
        toLabel: labelOf(plan, to, bindingNames),
        bytes: Number((src && tensorBytes(src)) ?? 0n),
        where: `chain ${c} instruction ${i}`,
      });
    }),
  );
  for (const cp of copies) {
    addRole(cp.to, `${cp.direction} copy of ${cp.fromLabel}`);
    addRole(cp.from, `copied ${cp.direction} to ${cp.toLabel}`);
  }

  const arenas: PlanArena[] = plan.nonConstBufferSizes.map((size, index) => ({
    index,
    size: Number(size),
    device: deviceLabel(arenaDevice(plan, index)),
    tensors: [],
  }));
  let unplanned = 0;
  plan.values.forEach((v, value) => {
    if (v.type !== 'Tensor') return;
    const place = placement(plan, v.tensor);
    const arena = place && arenas[place.arena];
    if (!place || !arena) {
      unplanned++;
      return;
    }
    pte.reportBudget.chargeReport(2 * v.tensor.sizes.length + 256, `${name} > value %${value}`);
    arena.tensors.push({
      value,
      fqn: shortNameOrNull(tensorName(v.tensor)),
      label: labelOf(plan, value, bindingNames),
      dtype: scalarTypeName(v.tensor.scalarType).toLowerCase(),
      shape: v.tensor.sizes,
      bytes: Number(place.bytes),
      arena: place.arena,
      offset: Number(place.offset),
      device: deviceLabel(place.device),
      roles: roles.get(value) ?? [],
    });
  });
  for (const a of arenas) a.tensors.sort((x, y) => x.offset - y.offset || x.value - y.value);
  // Arena 0 is reserved (ExecuTorch's MemoryPlanningPass starts at memory_id 1): shown only when something claims it.
  const shown = arenas.filter((a) => a.index > 0 || a.size > 0 || a.tensors.length > 0);
  return { name, arenas: shown, unplanned, copies, delegates, staging: stagingBytes(plan) };
}

export async function memoryPlan(pte: PteFile, opts: { method?: string } = {}): Promise<MemoryPlan> {
  const methods: MethodPlan[] = [];
  const refs = new Map<number, DelegateRef[]>();
  for (const r of delegatesOf(pte)) {
    const list = refs.get(r.planIndex);
    if (list) list.push(r);
    else refs.set(r.planIndex, [r]);
  }
  for (const [i, plan] of pte.program.executionPlan.entries()) {
    if (opts.method !== undefined && plan.name !== opts.method) continue;
    methods.push(await methodPlan(pte, i, plan, refs.get(i) ?? []));
  }
  return { file: pte.path, fileSize: pte.fileSize, methods };
}
