// Instructions compared by what they do: a kernel call is its operator and
// its arguments described by meaning (describe.ts), so the same copy reads
// the same in both programs however the values were renumbered. A delegate
// call is the delegate it calls; how its arguments changed is the delegates
// section's business, so a rewired call is one entry there instead of a
// removed and an added call here.

import type { Instruction } from '../pte/model.js';
import { operatorName as pteOperatorName } from '../pte/tensor.js';
import { describeValue } from './describe.js';
import { keyedChanges } from './lcs.js';
import type { InstructionChange } from './report.js';
import type { MethodView } from './view.js';
import { shortName } from '../util/display.js';
import { itemAt } from '../util/present.js';

export function operatorName(view: MethodView, opIndex: number): string {
  const op = view.plan.operators[opIndex];
  if (!op) return `<operator ${opIndex}>`;
  const name = shortName(pteOperatorName(op, '<no name>'));
  view.budget.chargeReport(name.length + 8, `${view.name} > operators[${opIndex}]`);
  return name;
}

export function delegateTitle(view: MethodView, index: number): string {
  const d = view.plan.delegates[index];
  return `delegate${index} (${d ? (d.id ?? 'no id') : 'missing'})`;
}

/** The key and text of one instruction (they are the same string). */
export function instructionText(view: MethodView, ins: Instruction): string {
  const value = (i: number) => describeValue(view, i, { delegateRoles: true });
  switch (ins.type) {
    case 'KernelCall': {
      let args = ins.args;
      // The last argument is the return value; when it is one of the
      // arguments (an out-variant's `out`, an in-place op's `self`) showing
      // it twice says nothing.
      const last = args.at(-1);
      if (args.length >= 2 && last !== undefined && args.slice(0, -1).includes(last)) args = args.slice(0, -1);
      return `${operatorName(view, ins.opIndex)}(${args.map(value).join(', ')})`;
    }
    case 'DelegateCall':
      return `call ${delegateTitle(view, ins.delegateIndex)}`;
    case 'MoveCall':
      return `move ${value(ins.moveFrom)} -> ${value(ins.moveTo)}`;
    case 'JumpFalseCall':
      return `jump_false ${value(ins.condValueIndex)} -> [${ins.destinationInstruction}]`;
    case 'FreeCall':
      return `free ${value(ins.valueIndex)}`;
    case 'None':
      return '<empty instruction>';
  }
}

function opOf(view: MethodView, ins: Instruction): string | null {
  return ins.type === 'KernelCall' ? operatorName(view, ins.opIndex) : null;
}

/** Added, removed and moved instructions, chain by chain (chains are matched by index). */
export function diffInstructions(a: MethodView, b: MethodView): InstructionChange[] {
  const out: InstructionChange[] = [];
  const chains = Math.max(a.plan.chains.length, b.plan.chains.length);
  for (let chain = 0; chain < chains; chain++) {
    const insA = a.plan.chains[chain]?.instructions ?? [];
    const insB = b.plan.chains[chain]?.instructions ?? [];
    const keysA = insA.map((i) => instructionText(a, i));
    const keysB = insB.map((i) => instructionText(b, i));
    for (const c of keyedChanges(keysA, keysB)) {
      // keyedChanges indexes the key lists it was given, one key per instruction.
      const [view, ins, text]: [MethodView, Instruction, string] =
        c.change === 'added'
          ? [b, itemAt(insB, c.b, `${b.name} > chain ${chain} instruction`), itemAt(keysB, c.b, `${b.name} > chain ${chain} key`)]
          : [a, itemAt(insA, c.a, `${a.name} > chain ${chain} instruction`), itemAt(keysA, c.a, `${a.name} > chain ${chain} key`)];
      out.push({
        chain,
        change: c.change,
        before_index: c.change === 'added' ? null : c.a,
        after_index: c.change === 'removed' ? null : c.b,
        kind: ins.type,
        op: opOf(view, ins),
        text,
      });
    }
  }
  return out;
}
