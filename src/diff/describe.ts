// Values described by meaning, so that two programs can be compared
// although a rewrite renumbers every value: a tensor by its fully qualified
// name, else by its role (the method's input/output, or the delegate binding
// it is passed as), else by dtype, shape and where it is planned; scalars and
// lists by value. The description is both the comparison key and what a
// reviewer reads, so it stays short.

import type { EValue, Tensor } from '../pte/model.js';
import { deviceLabel, placement, scalarTypeName, taggedDevice, tensorName } from '../pte/tensor.js';
import type { MethodView } from './view.js';
import { shortName } from '../util/display.js';

export interface DescribeOptions {
  /** Name tensors by the delegate binding they are passed as (off when describing that very binding). */
  delegateRoles?: boolean;
}

export const dtypeName = (t: Tensor) => scalarTypeName(t.scalarType).toLowerCase();

/** `float[1,2,8,4]`: dtype and shape. */
export const shapeOf = (t: Tensor) => `${dtypeName(t)}[${t.sizes.join(',')}]`;

/** Where a tensor lives: `@a2(cuda:0)` planned, `const`, or `@unplanned(cpu)`. */
function whereOf(view: MethodView, t: Tensor): string {
  const p = placement(view.plan, t);
  if (p) return `@a${p.arena}(${deviceLabel(p.device)})`;
  // No planned memory: data from the program (constant), or memory the
  // runtime sizes itself (dynamic outputs).
  return t.dataBufferIdx > 0 ? ' const' : `@unplanned(${deviceLabel(taggedDevice(t))})`;
}

/** Dtype, shape and place of a tensor without looking at its name or role. */
export const anonymousTensor = (view: MethodView, t: Tensor) => `${shapeOf(t)}${whereOf(view, t)}`;

const doubleText = (d: number) => (Number.isInteger(d) ? d.toFixed(1) : String(d));

export function describeValue(view: MethodView, index: number, opts: DescribeOptions = {}, depth = 0): string {
  // What the text will hold is charged first where it grows with the
  // program (a shape, a list), so a repeated reference is refused before
  // it is written out again.
  const v = view.plan.values[index];
  const width = v?.type === 'Tensor' ? v.tensor.sizes.length : v && 'items' in v ? v.items.length : 0;
  view.budget.chargeReport(2 * width, `${view.name} > value %${index}`);
  const text = valueText(view, index, opts, depth);
  view.budget.chargeReport(text.length + 8, `${view.name} > value %${index}`);
  return text;
}

function valueText(view: MethodView, index: number, opts: DescribeOptions, depth: number): string {
  const v: EValue | undefined = view.plan.values[index];
  if (v === undefined) return `<missing %${index}>`;
  // Lists hold value indices; a list of lists is not something the emitter
  // writes, and a crafted cycle must not recurse forever.
  const item = (i: number) => (depth > 1 ? `%${i}` : describeValue(view, i, opts, depth + 1));
  switch (v.type) {
    case 'None':
      return '<empty>';
    case 'Null':
      return 'None';
    case 'Int':
      return v.intVal.toString();
    case 'Bool':
      return String(v.boolVal);
    case 'Double':
      return doubleText(v.doubleVal);
    case 'String':
      return v.stringVal === null ? '<no string>' : JSON.stringify(shortName(v.stringVal));
    case 'IntList':
      return `[${v.items.map((i) => item(Number(i))).join(', ')}]`;
    case 'DoubleList':
      return `[${v.items.map(doubleText).join(', ')}]`;
    case 'BoolList':
      return `[${v.items.join(', ')}]`;
    case 'TensorList':
      return `[${v.items.map(item).join(', ')}]`;
    case 'OptionalTensorList':
      return `[${v.items.map((i) => (i < 0 ? 'None' : item(i))).join(', ')}]`;
    case 'Tensor': {
      const name = tensorName(v.tensor);
      if (name) return shortName(name);
      const role = view.io.get(index) ?? (opts.delegateRoles ? view.roles.get(index) : undefined);
      return role ?? anonymousTensor(view, v.tensor);
    }
  }
}
