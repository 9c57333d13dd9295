// The runtime-contract assertions `trtx verify` makes over runner reports.
// Each returns a named pass/fail with the first counter-example.

import type { RunnerReport } from '../runner/report.js';
import { itemAt } from '../util/present.js';

export interface Assertion {
  name: string;
  ok: boolean;
  detail: string;
}

type Step = RunnerReport['methods'][number]['steps'][number];

function stepsOf(r: RunnerReport): Map<string, Step[]> {
  return new Map(r.methods.map((m) => [m.name, m.steps]));
}

/** Every output and every named buffer bit-identical at every step. */
export function compareRuns(a: RunnerReport, b: RunnerReport, label: string): Assertion {
  const name = `outputs and caches identical at every step: ${label}`;
  const sa = stepsOf(a);
  const sb = stepsOf(b);
  for (const [method, stepsA] of sa) {
    const stepsB = sb.get(method);
    if (!stepsB || stepsB.length !== stepsA.length)
      return { name, ok: false, detail: `${method}: ${stepsA.length} vs ${stepsB?.length ?? 0} steps` };
    for (const [s, stepA] of stepsA.entries()) {
      // Same length, checked above.
      const stepB = itemAt(stepsB, s, `${label} > ${method} step ${s}`);
      const oa = stepA.outputs;
      const ob = stepB.outputs;
      if (oa.length !== ob.length) return { name, ok: false, detail: `${method} step ${s}: ${oa.length} vs ${ob.length} outputs` };
      for (const [i, outA] of oa.entries()) {
        const outB = itemAt(ob, i, `${label} > ${method} step ${s} output ${i}`);
        if (outA.digest !== outB.digest)
          return { name, ok: false, detail: `${method} step ${s}: output ${i} differs (${outA.digest} vs ${outB.digest})` };
      }
      const bb = new Map(stepB.buffers.map((x) => [x.name, x.digest]));
      for (const buf of stepA.buffers) {
        const other = bb.get(buf.name);
        if (other === undefined) return { name, ok: false, detail: `${method} step ${s}: buffer ${buf.name} missing on one side` };
        if (other !== buf.digest)
          return { name, ok: false, detail: `${method} step ${s}: buffer ${buf.name} differs (${buf.digest} vs ${other})` };
      }
    }
  }
  return { name, ok: true, detail: `${[...sa.values()].reduce((n, s) => n + s.length, 0)} steps compared` };
}

/**
 * Each cache's digest changes from every step to the next, in each method
 * that writes it (`writes`, by method; all of them when absent): a method
 * that only reads a cache another method writes sees it change only when
 * the writer ran in between.
 */
export function cachesChangeEveryStep(
  r: RunnerReport,
  caches: string[],
  label: string,
  writes?: ReadonlyMap<string, readonly string[]>,
): Assertion {
  const name = `every cache changes at every step: ${label}`;
  let seen = 0;
  for (const m of r.methods) {
    for (const cache of caches) {
      if (writes && !writes.get(m.name)?.includes(cache)) continue;
      const digests = m.steps.map((s) => s.buffers.find((b) => b.name === cache)?.digest);
      if (digests.every((d) => d === undefined)) continue;
      seen++;
      for (let s = 1; s < digests.length; s++) {
        if (digests[s] === undefined) return { name, ok: false, detail: `${m.name}: cache ${cache} missing at step ${s}` };
        if (digests[s] === digests[s - 1])
          return { name, ok: false, detail: `${m.name}: cache ${cache} unchanged from step ${s - 1} to ${s}` };
      }
    }
  }
  if (seen === 0) return { name, ok: false, detail: `none of the caches (${caches.join(', ')}) appears in the report` };
  return { name, ok: true, detail: `${seen} cache(s)` };
}

/**
 * The steps see what earlier steps wrote: a persistent run differs from a
 * run that reloads the method before every step, at some step from step 1
 * on. Not necessarily at every step: what a step writes can equal what a
 * fresh load holds (transformers' StaticCache given token 0, a zero padding
 * embedding, writes zero keys and values, so its next step computes what a
 * fresh one does). Steps equal to a fresh step are named in the detail; a
 * program that keeps no state at all differs at no step and fails. Whether
 * every step computes the right thing is the comparison with eager PyTorch.
 * Asked of the methods in `keeping` (all when absent): those that read a
 * buffer they write (state-roles.ts); a method that only writes state has no
 * step that could show it, one that reads another method's is
 * readsWhatWasWritten's.
 */
export function persistentDiffersFromFresh(
  persistent: RunnerReport,
  fresh: RunnerReport,
  label: string,
  keeping?: ReadonlySet<string>,
): Assertion {
  const name = `each step sees what the previous one wrote (persistent vs fresh caches): ${label}`;
  const f = stepsOf(fresh);
  const equal: string[] = [];
  let differing = 0;
  for (const m of persistent.methods) {
    if (keeping && !keeping.has(m.name)) continue;
    const fs = f.get(m.name);
    if (!fs) return { name, ok: false, detail: `${m.name}: missing from the fresh run` };
    for (const [s, step] of m.steps.entries()) {
      if (s === 0) continue;
      if (step.outputs.every((o, i) => fs[s]?.outputs[i]?.digest === o.digest)) equal.push(`${m.name} step ${s}`);
      else differing++;
    }
  }
  if (differing === 0)
    return {
      name,
      ok: false,
      detail: `${equal.join(', ') || 'no step after the first'}: outputs equal with fresh caches at every step, so no step saw what an earlier one wrote`,
    };
  const note = equal.length ? `; equal to a fresh step at ${equal.join(', ')} (what the step before wrote equals a fresh load)` : '';
  return { name, ok: true, detail: `outputs differ with fresh caches at ${differing} step(s)${note}` };
}

/**
 * A method that only reads state other methods write (share_mutable_buffers,
 * loaded with Module(share_memory_arenas); state-roles.ts) reads what they
 * wrote. The persistent run executes every method in turn in one loaded
 * program, so from the first step at which a writer ran before it, the
 * reader sees the writer's state; the fresh run loads each method alone,
 * arenas of its own, before every step, so its reader sees what a fresh load
 * holds. A reader equal to a fresh load at every step never saw what the
 * writers wrote: the methods do not share the buffer when they run. As with
 * persistentDiffersFromFresh, single steps may agree (a writer can write what
 * a fresh load holds); never all of them.
 */
export function readsWhatWasWritten(
  persistent: RunnerReport,
  fresh: RunnerReport,
  reader: string,
  from: readonly { buffer: string; writers: readonly string[] }[],
  label: string,
): Assertion {
  const writers = [...new Set(from.flatMap((f) => f.writers))];
  const buffers = from.map((f) => f.buffer).join(', ');
  const name = `${reader} reads what ${writers.join(' and ')} wrote to ${buffers} (persistent, methods sharing arenas, vs fresh loads): ${label}`;
  const steps = persistent.methods.find((m) => m.name === reader)?.steps ?? [];
  const freshSteps = stepsOf(fresh).get(reader);
  if (!freshSteps) return { name, ok: false, detail: `${reader}: missing from the fresh run` };
  const differing = steps.filter((st, s) => !st.outputs.every((o, i) => freshSteps[s]?.outputs[i]?.digest === o.digest)).length;
  if (differing === 0)
    return {
      name,
      ok: false,
      detail: `${reader}'s outputs equal a fresh load's at all ${steps.length} steps: it never saw what ${writers.join(' and ')} wrote, so the methods do not share ${buffers} at run time`,
    };
  return { name, ok: true, detail: `outputs differ from a fresh load's at ${differing} of ${steps.length} step(s)` };
}

/** The device-resident buffers a run reported, each once, in report order. */
function deviceBufferNames(r: RunnerReport): string[] {
  return [
    ...new Set(r.methods.flatMap((m) => m.steps.flatMap((s) => s.buffers.filter((b) => b.placement === 'device').map((b) => b.name)))),
  ];
}

/**
 * Device arenas are poisoned at allocation and never cleared by the runtime:
 * a run whose outputs or buffers change once the application initialises the
 * device-resident buffers read them before anything wrote them.
 */
export function deviceStateWrittenFirst(poisoned: RunnerReport, initialised: RunnerReport, label: string): Assertion {
  const name = `device-resident buffers are written before they are read: ${label} (poisoned arenas vs initialised)`;
  const cmp = compareRuns(initialised, poisoned, label);
  if (cmp.ok) return { name, ok: true, detail: 'same results with and without the application zeroing them' };
  const device = deviceBufferNames(poisoned);
  return {
    name,
    ok: false,
    detail: `${cmp.detail}: the program reads ${device.join(', ')} before writing them. Device arenas are not cleared (ExecuTorch leaves them as cudaMalloc returns them; verify fills them with 0xFF): initialise these buffers in the application after load_method, as --init-device-buffers models`,
  };
}

/**
 * For a zero-copy program (the twin verify derived, or one given), run as its
 * contract says (caches initialised by the application, contract.ts):
 * whether that obligation is real for this program. Not a failure of the
 * program, whose contract puts the duty on the application, but a finding
 * the deployment must act on; it holds when the evidence agrees with check's
 * RT_DEVICE_STATE_UNINITIALIZED.
 */
export function contractNeedsInitialisation(poisoned: RunnerReport, initialised: RunnerReport, label: string): Assertion {
  const name = `the application initialises the device-resident caches, as the zero-copy contract requires: ${label} (initialised vs poisoned)`;
  const cmp = compareRuns(initialised, poisoned, label);
  if (cmp.ok)
    return {
      name,
      ok: true,
      detail: 'the same results without initialising them: this program writes its device-resident buffers before reading them',
    };
  const device = deviceBufferNames(poisoned);
  return {
    name,
    ok: true,
    detail: `required: left as ExecuTorch leaves device memory (verify poisons it with 0xFF), ${cmp.detail}; the zero-copy program reads ${device.join(', ')} before writing them, so its application must initialise them after load_method (RT_DEVICE_STATE_UNINITIALIZED)`,
  };
}
