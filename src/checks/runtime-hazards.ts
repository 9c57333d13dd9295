// What a program needs from the runtime that executes it, under the rules of
// `--runtime` (runtime-rules.ts). Each hazard is a place where a sound-looking
// program fails, or computes garbage, on a runtime users deploy:
//
// RT_DEVICE_STATE_UNINITIALIZED  a mutable buffer planned in a CUDA arena.
//   ExecuTorch allocates device arenas with the registered DeviceAllocator
//   (cudaMalloc) and never clears them, while host arenas start zeroed
//   (extension/module/module.cpp make_planned_memory_with_devices): the
//   application must initialise the buffer before the first execute.
// RT_DEVICE_INITIAL_STATE  such a buffer with initial state: ExecuTorch
//   copies it straight to the planned address on the host
//   (runtime/executor/tensor_parser_exec_aten.cpp), which is device memory,
//   so the method does not load.
// RT_SHARED_DEVICE_ARENA  a buffer two methods share in a device arena:
//   Module shares arenas between methods only with share_memory_arenas,
//   which it refuses for device memory (NotSupported); without it each
//   method has its own copy and the other's writes are lost.
// RT_NEEDS_ZERO_COPY_TRT  a TensorRT call with its aliased outputs elided:
//   Torch-TensorRT without the zero-copy contract needs inputs + outputs
//   arguments and fails the first execute with "expected at least N args".

import { RT_CODES } from '../codes/index.js';
import type { ExecutionPlan } from '../pte/model.js';
import { deviceLabel, placement, planName, tensorAt, tensorName, valueLabel } from '../pte/tensor.js';
import { inputs, outputs, aliasedOutputs } from '../tensorrt/blob.js';
import { specView } from '../tensorrt/delegate-view.js';
import { callsOf } from '../tensorrt/delegates.js';
import { atLabel, mutableBuffers, parseIndexPair, planAt, sharedAcrossMethods } from '../graph/dataflow.js';
import { present } from '../util/present.js';
import { shortList } from '../util/display.js';
import type { CheckContext } from './context.js';
import { inPlaceBuffers } from './zero-copy-scan.js';
import { diag, type Diagnostic, type Severity } from './diagnostic.js';
import { DEFAULT_RUNTIME, RUNTIME_NAMES, type RuntimeRules } from './runtime-rules.js';

/** Every hazard code and what it means (src/codes/checks.ts). */
export const RUNTIME_HAZARDS = RT_CODES;
export type RuntimeHazardCode = keyof typeof RUNTIME_HAZARDS;

interface DeviceBuffer {
  plan: number;
  value: number;
  name: string;
  arena: number;
  device: string;
  initialState: boolean;
}

function deviceBuffers(plan: ExecutionPlan, p: number, inPlace: ReadonlySet<number>): DeviceBuffer[] {
  const out: DeviceBuffer[] = [];
  for (const v of new Set([...mutableBuffers(plan), ...inPlace])) {
    const t = tensorAt(plan, v);
    const r = t && placement(plan, t);
    if (!t || !r || r.device.type !== 'cuda') continue;
    out.push({
      plan: p,
      value: v,
      name: tensorName(t) ?? valueLabel(plan, v),
      arena: r.arena,
      device: deviceLabel(r.device),
      initialState: t.dataBufferIdx !== 0,
    });
  }
  return out;
}

/** Pushes one hazard onto the check's list (the delegate only for a call's hazard). */
type AddHazard = (
  severity: Severity,
  code: RuntimeHazardCode,
  method: string | null,
  location: string,
  message: string,
  hint: string,
  delegate?: number | null,
) => void;

export function checkRuntimeHazards(ctx: CheckContext): Diagnostic[] {
  const rules: RuntimeRules = ctx.options.runtime ?? DEFAULT_RUNTIME;
  const out: Diagnostic[] = [];
  const add: AddHazard = (severity, code, method, location, message, hint, delegate = null) =>
    out.push(diag(ctx.pte.reportBudget, severity, code, location, message, hint, { method, delegate }));
  // The order of the steps is the order of the report: per method, then
  // across methods, then per TensorRT call.
  deviceStateHazards(ctx, rules, add);
  sharedArenaHazards(ctx, rules, add);
  zeroCopyCallHazards(ctx, rules, add);
  return out;
}

/**
 * RT_DEVICE_INITIAL_STATE for each mutable buffer with initial state in a
 * device arena, then RT_DEVICE_STATE_UNINITIALIZED once per device arena
 * for the ones without, method by method.
 */
function deviceStateHazards(ctx: CheckContext, rules: RuntimeRules, add: AddHazard): void {
  const program = ctx.pte.program;
  const memory = RUNTIME_NAMES[rules.memory];
  program.executionPlan.forEach((plan, p) => {
    const m = planName(plan, p);
    const uninitialised = new Map<string, DeviceBuffer[]>();
    for (const b of deviceBuffers(plan, p, inPlaceBuffers(program, p, ctx))) {
      if (b.initialState) {
        add(
          'error',
          'RT_DEVICE_INITIAL_STATE',
          m,
          `${m} > buffer ${b.name}`,
          `${b.name} has initial state and is planned in arena ${b.arena} on ${b.device}: ExecuTorch copies initial state on the host straight to the planned address, which is device memory, so ${m} does not load (runtime/executor/tensor_parser_exec_aten.cpp)`,
          'drop the initial state and initialise the buffer in the application after load_method, or keep the buffer in a host arena (staged)',
        );
      } else {
        // Appended, not copied: an arena may hold tens of thousands of buffers.
        const key = `arena ${b.arena} on ${b.device}`;
        const list = uninitialised.get(key);
        if (list) list.push(b);
        else uninitialised.set(key, [b]);
      }
    }
    for (const [arena, buffers] of uninitialised) {
      const names = buffers.map((b) => b.name);
      const shown = shortList(names);
      add(
        'warning',
        'RT_DEVICE_STATE_UNINITIALIZED',
        m,
        `${m} > ${arena}`,
        `${names.length} mutable buffer(s) (${shown}) live in ${arena}, which ${memory} allocates with the registered DeviceAllocator and never clears (host arenas start zeroed): until the application writes them, the first execute reads whatever the memory held`,
        "initialise them after load_method and before the first execute (zero them, as ExecuTorch's own KV decode check does); `trtx verify --init-device-buffers` models an application that does",
      );
    }
  });
}

/**
 * RT_SHARED_DEVICE_ARENA for each buffer two methods share, in a device
 * arena in at least one of them: an error under ExecuTorch's Module, which
 * cannot share device arenas, a warning for a custom memory manager.
 */
function sharedArenaHazards(ctx: CheckContext, rules: RuntimeRules, add: AddHazard): void {
  const program = ctx.pte.program;
  const memory = RUNTIME_NAMES[rules.memory];
  const reported = new Set<string>();
  for (const [key, others] of sharedAcrossMethods(program)) {
    const [p, v] = present(parseIndexPair(key), `shared buffer key ${key}`);
    const plan = planAt(program, p);
    const t = tensorAt(plan, v);
    const r = t && placement(plan, t);
    if (!t || !r) continue;
    const onDevice = [{ plan: p, value: v }, ...others].some((b) => {
      const bplan = planAt(program, b.plan);
      const bt = tensorAt(bplan, b.value);
      return (bt && placement(bplan, bt))?.device.type === 'cuda';
    });
    const name = tensorName(t) ?? valueLabel(plan, v);
    const methods = [p, ...others.map((o) => o.plan)].map((i) => planName(planAt(program, i), i));
    const id = `${name}\0${r.arena}`;
    if (!onDevice || reported.has(id)) continue;
    reported.add(id);
    const m = planName(plan, p);
    if (rules.memory === 'et-module') {
      add(
        'error',
        'RT_SHARED_DEVICE_ARENA',
        m,
        `${m} > buffer ${name}`,
        `${methods.join(' and ')} share ${name} in device arena ${r.arena}: Module shares arenas between methods only with share_memory_arenas, which it refuses for device memory (NotSupported, extension/module/module.cpp); without it each method gets its own arena and the other's writes are lost`,
        'keep the shared cache in a host arena, give each method its own cache, or load the program with your own memory manager that hands both methods one device arena (`--runtime custom-memory`)',
      );
    } else {
      add(
        'warning',
        'RT_SHARED_DEVICE_ARENA',
        m,
        `${m} > buffer ${name}`,
        `${methods.join(' and ')} share ${name} in device arena ${r.arena}: ${memory} must hand every one of them the same device memory for arena ${r.arena}`,
        'pass one HierarchicalAllocator span for that arena to every load_method of these methods',
      );
    }
  }
}

/**
 * RT_NEEDS_ZERO_COPY_TRT for each well-formed TensorRT call that elides its
 * aliased outputs: an error under stock Torch-TensorRT, a warning otherwise.
 */
function zeroCopyCallHazards(ctx: CheckContext, rules: RuntimeRules, add: AddHazard): void {
  for (const d of ctx.trt) {
    const need = inputs(d.blob.metadata).length + outputs(d.blob.metadata).length;
    const aliased = aliasedOutputs(d.blob.metadata).length;
    const stamped = specView(d.delegate).zeroCopy !== null;
    const m = planName(d.plan, d.planIndex);
    for (const c of callsOf(d.plan, d.delegateIndex)) {
      // Only a well-formed zero-copy call: any other arity is TRT_ARITY's.
      if (aliased === 0 || c.call.args.length !== need - aliased) continue;
      const at = `${d.location} > ${atLabel(c)}`;
      const msg = `the call passes ${c.call.args.length} arguments (${need} inputs and outputs, ${aliased} aliased output(s) elided${stamped ? ', stamped zero_copy_kv' : ''}): Torch-TensorRT without the zero-copy KV contract (pull request 4667, not merged upstream) needs at least ${need} and fails the first execute with "expected at least ${need} args"`;
      if (rules.delegate === 'stock-trt') {
        add(
          'error',
          'RT_NEEDS_ZERO_COPY_TRT',
          m,
          at,
          msg,
          'run it on a Torch-TensorRT runtime with the zero-copy contract, or keep the caches staged (export without --zero-copy-kv)',
          d.delegateIndex,
        );
      } else {
        add(
          'warning',
          'RT_NEEDS_ZERO_COPY_TRT',
          m,
          at,
          msg,
          'deploy with a Torch-TensorRT runtime that has the zero-copy contract; `trtx check --runtime stock-trt` refuses the program',
          d.delegateIndex,
        );
      }
    }
  }
}
