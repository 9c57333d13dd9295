// Editing a program spec in a copy: the broken shapes (src/examples/broken.ts,
// broken-blob.ts) and the tests change one thing of a sound twin this way.

import { isKernel } from './ops.js';
import type { DelegateSpec, MethodSpec, ProgramSpec } from './spec.js';

/** A deep copy: specs hold bigints and byte arrays, which structuredClone keeps. */
export function cloneSpec(spec: ProgramSpec): ProgramSpec {
  return structuredClone(spec);
}

export function methodOf(spec: ProgramSpec, name: string): MethodSpec {
  const m = spec.methods.find((x) => x.name === name);
  if (!m) throw new Error(`fixture: no method ${name}`);
  return m;
}

export function delegateOf(m: MethodSpec, name: string): DelegateSpec {
  const d = m.delegates.find((x) => x.name === name);
  if (!d) throw new Error(`fixture: method ${m.name} has no delegate ${name}`);
  return d;
}

export function replaceMethod(spec: ProgramSpec, m: MethodSpec): ProgramSpec {
  return { ...spec, methods: spec.methods.map((x) => (x.name === m.name ? m : x)) };
}

export function callOf(m: MethodSpec, delegate: string) {
  const i = m.instructions.findIndex((ins) => !isKernel(ins) && ins.delegate === delegate);
  if (i < 0) throw new Error(`fixture: method ${m.name} never calls ${delegate}`);
  return i;
}
