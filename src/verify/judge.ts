// What `trtx verify` proves on the runs it made (runs.ts), in the order the
// result lists it: every run completed; then, only when they all did
// (comparing runs that failed proves nothing), the initialisation question,
// staged and zero-copy in every caller-stream mode bit-identical, every cache
// changing at every step, and each method seeing the state it should.

import type { RunnerReport } from '../runner/report.js';
import {
  cachesChangeEveryStep,
  compareRuns,
  deviceStateWrittenFirst,
  persistentDiffersFromFresh,
  readsWhatWasWritten,
  contractNeedsInitialisation,
  type Assertion,
} from './assertions.js';
import type { VerifyRuns } from './runs.js';
import { keepsState, type StateRoles } from './state-roles.js';
import type { Variant, Variants } from './variants.js';

/** The runs verify made, and what they are to each other. */
export interface RunsToJudge {
  runs: VerifyRuns;
  variants: Variants;
  /** The caller-stream modes each variant ran in, the first first. */
  modes: [boolean, ...boolean[]];
  /** The first variant in the first mode: what every other run is compared with. */
  first: RunnerReport;
  /** The primary variant (the last), no caller stream, persistent caches. */
  primary: Variant;
  primaryReport: RunnerReport;
  /** The primary with fresh caches at every step. */
  fresh: RunnerReport;
  /** The primary at the other initialisation, when it has device-resident state. */
  other: RunnerReport | null;
  /** Whether runs initialise device buffers unless told otherwise. */
  runInit: boolean;
  /** A zero-copy program (a derived twin, or one given) ran initialised, as its contract makes the application do (contract.ts). */
  contract: boolean;
  caches: string[];
  roles: StateRoles;
}

/** Every assertion but the reference comparison's (reference.ts), in the order the result reports them. */
export function judgeRuns(j: RunsToJudge): Assertion[] {
  const assertions = completionAssertions(j);
  // Comparing runs that did not complete proves nothing: report the failures alone.
  if (!j.runs.completed) return assertions;
  // Under the zero-copy contract the poisoned run shows the application's duty; otherwise, a program run poisoned must not read its device state before writing it.
  let writtenFirst: Assertion | null = null;
  if (j.other) {
    if (j.contract) assertions.push(contractNeedsInitialisation(j.other, j.primaryReport, j.primary.name));
    else assertions.push((writtenFirst = deviceStateWrittenFirst(j.primaryReport, j.other, j.primary.name)));
  }
  assertions.push(...agreementAssertions(j), ...cacheAssertions(j));
  // Runs that read poison compute NaN whatever the caches held: comparing them proves nothing.
  if (writtenFirst === null || writtenFirst.ok) assertions.push(...stateAssertions(j));
  return assertions;
}

function completionAssertions(j: RunsToJudge): Assertion[] {
  return j.runs.runs.map((r) => ({
    name: `${r.variant} run${r.caller_stream ? ' (caller stream)' : ''}${r.fresh_state ? ' (fresh caches)' : ''}${r.init_device_buffers !== j.runInit ? (r.init_device_buffers ? ' (device buffers initialised)' : ' (device buffers left poisoned)') : ''} completes`,
    ok: r.ok && r.exit_code === 0,
    detail: r.errors.map((e) => `${e.code}: ${e.location}: ${e.message}`).join('; '),
  }));
}

/** Every variant in every mode against the first: outputs and caches bit-identical at every step. */
function agreementAssertions(j: RunsToJudge): Assertion[] {
  const out: Assertion[] = [];
  const [firstVariant] = j.variants;
  const [firstMode] = j.modes;
  for (const v of j.variants) {
    for (const cs of j.modes) {
      const rep = j.runs.get(v, cs);
      if (rep !== j.first)
        out.push(
          compareRuns(j.first, rep, `${firstVariant.name} (stream ${firstMode ? 'on' : 'off'}) vs ${v.name} (stream ${cs ? 'on' : 'off'})`),
        );
    }
  }
  return out;
}

function cacheAssertions(j: RunsToJudge): Assertion[] {
  if (!j.caches.length) return [];
  const writes = new Map([...j.roles.methods].map(([m, r]) => [m, r.writes]));
  const out: Assertion[] = [];
  for (const v of j.variants)
    for (const cs of j.modes)
      out.push(cachesChangeEveryStep(j.runs.get(v, cs), j.caches, `${v.name} (stream ${cs ? 'on' : 'off'})`, writes));
  return out;
}

/**
 * Only a method that reads state it writes has a "previous step" to see;
 * one that reads only what other methods write must see what they wrote;
 * one that only writes is seen through its readers (state-roles.ts).
 */
function stateAssertions(j: RunsToJudge): Assertion[] {
  const out: Assertion[] = [];
  const keeping = new Set([...j.roles.methods].filter(([, r]) => keepsState(r)).map(([m]) => m));
  if (keeping.size) out.push(persistentDiffersFromFresh(j.primaryReport, j.fresh, j.primary.name, keeping));
  for (const [m, r] of j.roles.methods)
    if (!keeping.has(m) && r.readsFrom.length) out.push(readsWhatWasWritten(j.primaryReport, j.fresh, m, r.readsFrom, j.primary.name));
  return out;
}
