// What the ExecuTorch 1.5.1 runtime trtx pins (the executorch wheel's
// libexecutorch.so, python-bridge/requirements.lock) refuses of a program as a
// whole, at Program::load or the first method load, that structure.ts and
// runtime-refusals.ts do not cover:
// - STRUCT_PROGRAM_VERSION: a schema version above the highest the runtime
//   reads (runtime/executor/program.h kMaxSupportedSchemaVersion = 0 in
//   1.5.1; InvalidProgram at Program::load);
// - STRUCT_CONSTANT_BUFFER: a program without a constant segment (no
//   constant_segment, or one with no offsets) takes the deprecated
//   constant_buffer path, which the wheel is built without
//   (ET_ENABLE_DEPRECATED_CONSTANT_BUFFER=0, runtime/executor/program.cpp):
//   InvalidProgram at Program::load, also when it has no constants at all;
// - STRUCT_NO_METHODS / STRUCT_NO_CHAINS: a program without execution plans
//   (program_validation.cpp: refused when absent; trtx refuses an empty list
//   too, which runs nothing) and a method without chains (method.cpp: "No
//   chains", InvalidProgram at method load).

import type { PteFile } from '../pte/open.js';
import { planName } from '../pte/tensor.js';
import { diag, type Diagnostic } from './diagnostic.js';

export const RUNTIME_PROGRAM_HINTS = {
  STRUCT_PROGRAM_VERSION: 'export the program with the ExecuTorch trtx pins (1.5.1), or run it on a runtime that reads its schema version',
  STRUCT_CONSTANT_BUFFER: 're-export the program with ExecuTorch 0.7 or later, which writes constants to a constant segment',
  STRUCT_NO_METHODS: 're-export the program; it has no method to run',
  STRUCT_NO_CHAINS: 're-export the program; a method needs at least one chain of instructions',
} as const;

export type RuntimeProgramCode = keyof typeof RUNTIME_PROGRAM_HINTS;
export const RUNTIME_PROGRAM_CODES = Object.keys(RUNTIME_PROGRAM_HINTS) as RuntimeProgramCode[];

/** runtime/executor/program.h (1.5.1): Program::kMaxSupportedSchemaVersion. */
export const MAX_SCHEMA_VERSION = 0;

export function checkRuntimeProgram(pte: PteFile): Diagnostic[] {
  const out: Diagnostic[] = [];
  const err = (code: RuntimeProgramCode, location: string, message: string, method: string | null = null) =>
    out.push(diag(pte.reportBudget, 'error', code, location, message, RUNTIME_PROGRAM_HINTS[code], { method }));
  const p = pte.program;
  if (p.version > MAX_SCHEMA_VERSION) {
    err(
      'STRUCT_PROGRAM_VERSION',
      'program > version',
      `schema version ${p.version} is newer than the ${MAX_SCHEMA_VERSION} the ExecuTorch 1.5.1 runtime reads (InvalidProgram at Program::load)`,
    );
  }
  if (!p.constantSegment || p.constantSegment.offsets.length === 0) {
    const inline = p.constantBuffer.length;
    err(
      'STRUCT_CONSTANT_BUFFER',
      'program > constant_segment',
      `${p.constantSegment ? 'constant_segment has no offsets' : 'no constant_segment'}${inline > 1 ? ` (constants inline in constant_buffer, ${inline} entries)` : ''}: ExecuTorch reads the program through the deprecated constant_buffer path, which the 1.5.1 runtime is built without (InvalidProgram at Program::load)`,
    );
  }
  if (p.executionPlan.length === 0) {
    err(
      'STRUCT_NO_METHODS',
      'program > execution_plan',
      'the program has no execution plan (ExecuTorch refuses an absent one at Program::load; an empty one runs nothing: trtx refuses both, stricter)',
    );
  }
  p.executionPlan.forEach((plan, i) => {
    if (plan.chains.length === 0)
      err(
        'STRUCT_NO_CHAINS',
        `${planName(plan, i)} > chains`,
        'the method has no chain ("No chains": InvalidProgram at method load)',
        planName(plan, i),
      );
  });
  return out;
}
