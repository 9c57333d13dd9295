// Every stable code trtx reports, one list per family, and the `Code` type
// derived from them: TrtxError.code and Diagnostic.code take a `Code`, so a
// misspelt code does not compile. docs/codes.md is generated from FAMILIES
// (scripts/gen-codes.ts, checked by `npm run gen:check`); test/codes.test.ts
// proves the TypeScript, Python and C++ sources name no code missing here.
// This module imports nothing outside src/codes/: every layer may use it.

import { CHECK_CODES, RT_CODES, STRUCT_CODES, TRT_CHECK_CODES, ZC_CHECK_CODES } from './checks.js';
import { COMMAND_CODES, FLAG_WARNING_CODES, GENERAL_CODES, OUTPUT_CODES, REWRITE_CODES } from './commands.js';
import { BRIDGE_CODES, BRIDGE_TYPE_CODES, BRIDGE_WARNING_CODES, PYENV_CODES, RUNNER_CODES, SDK_CODES } from './environment.js';
import { BRIDGE_MODEL_REFUSALS, EXIT_REFUSED, EXIT_USAGE, RUNNER_ENVIRONMENT_RESULTS, type ExitStatus, type FamilyExit } from './exit.js';
import { PTE_CODES, REF_ENGINE_CODES, REFERENCE_CODES, SPEC_CODES, TENSOR_FILE_CODES, TRT_BLOB_CODES } from './formats.js';
import { type RunnerReportCode, RUNNER_REPORT_CODES } from './runner-report.js';

export * from './checks.js';
export * from './commands.js';
export * from './environment.js';
export * from './exit.js';
export * from './formats.js';
export * from './runner-report.js';

export type PteCode = keyof typeof PTE_CODES;
export type TrtBlobCode = keyof typeof TRT_BLOB_CODES;
export type SpecCode = keyof typeof SPEC_CODES;
export type StandinEngineCode = keyof typeof REF_ENGINE_CODES;
export type ReferenceCode = keyof typeof REFERENCE_CODES;
export type TensorFileCode = keyof typeof TENSOR_FILE_CODES;
export type StructCode = keyof typeof STRUCT_CODES;
export type TrtCheckCode = keyof typeof TRT_CHECK_CODES;
export type ZcCheckCode = keyof typeof ZC_CHECK_CODES;
export type RtCode = keyof typeof RT_CODES;
export type CheckCode = keyof typeof CHECK_CODES;
export type GeneralCode = keyof typeof GENERAL_CODES;
export type RewriteCode = keyof typeof REWRITE_CODES;
export type OutputCode = keyof typeof OUTPUT_CODES;
export type CommandCode = keyof typeof COMMAND_CODES;
export type FlagWarningCode = keyof typeof FLAG_WARNING_CODES;
export type BridgeCode = keyof typeof BRIDGE_CODES | keyof typeof BRIDGE_TYPE_CODES;
export type PyenvCode = keyof typeof PYENV_CODES;
export type RunnerCode = keyof typeof RUNNER_CODES;
export type SdkCode = keyof typeof SDK_CODES;
export type BridgeWarningCode = keyof typeof BRIDGE_WARNING_CODES;

/** A code a TrtxError or a check finding carries (the `code` of every --json error document and finding). */
export type Code =
  | PteCode
  | TrtBlobCode
  | SpecCode
  | StandinEngineCode
  | ReferenceCode
  | TensorFileCode
  | StructCode
  | TrtCheckCode
  | ZcCheckCode
  | RtCode
  | CheckCode
  | GeneralCode
  | RewriteCode
  | OutputCode
  | CommandCode
  | BridgeCode
  | PyenvCode
  | SdkCode
  | RunnerCode;

/** Where a family's codes appear: refusals and findings (error), trtx's own logged warnings (warning), the bridge's warning events, the runner's report. */
export type CodeSpace = 'error' | 'warning' | 'bridge warning' | 'runner report';

export interface CodeFamily extends FamilyExit {
  title: string;
  /** One paragraph for docs/codes.md. */
  about: string;
  space: CodeSpace;
  codes: Readonly<Record<string, string>>;
}

export const FAMILIES: readonly CodeFamily[] = [
  {
    title: 'General',
    space: 'error',
    codes: GENERAL_CODES,
    exit: EXIT_USAGE,
    exitExceptions: { REPORT_BUDGET: 1 },
    about: 'Refusals any command can make.',
  },
  {
    title: 'The .pte container',
    space: 'error',
    codes: PTE_CODES,
    exit: 1,
    exitExceptions: { PTE_NOT_A_PROGRAM: 2, PTE_REWRITE_IN_PROGRESS: 2 },
    about:
      'Reading the ExecuTorch program file: its header, its FlatBuffer (verified before any field is read) and its segments. A file that is not a program at all exits 2; a program that is cut short or corrupt exits 1.',
  },
  {
    title: 'TensorRT delegate blobs',
    space: 'error',
    codes: TRT_BLOB_CODES,
    exit: 1,
    about:
      'Reading a TensorRTBackend delegate\u2019s blob: its header, its metadata JSON and the way Torch-TensorRT\u2019s own parser would read it. `trtx check` reports them as findings; the native runner reports the same names.',
  },
  {
    title: 'Compile specs',
    space: 'error',
    codes: SPEC_CODES,
    exit: 1,
    about:
      'A TensorRT delegate\u2019s compile specs, as the runtime reads them; the warnings flag values the runtime reads differently from how they are written.',
  },
  {
    title: 'Reference engines',
    space: 'error',
    codes: REF_ENGINE_CODES,
    exit: 1,
    about:
      'The trtx reference engine a blob carries in place of a TensorRT plan (schemas/reference-engine.md): version 2 holds the partition as an ExecuTorch program, version 1 a synthetic function (fixtures and benchmarks).',
  },
  {
    title: 'Reference outputs',
    space: 'error',
    codes: REFERENCE_CODES,
    exit: 1,
    exitExceptions: { REFERENCE_MISSING: 2 },
    about:
      'The file `trtx export` writes beside a program with eager PyTorch\u2019s outputs (`MODEL.pte.reference.json`, schemas/reference-outputs.schema.json), which `trtx verify` compares the program with (docs/reference-lowering.md).',
  },
  {
    title: 'Runner tensor files',
    space: 'error',
    codes: TENSOR_FILE_CODES,
    exit: 1,
    about:
      'The TRXT files `trtx verify` feeds the runner recorded inputs in and reads its outputs back from (docs/reference-lowering.md \u00a73).',
  },
  {
    title: 'Program structure',
    space: 'error',
    codes: STRUCT_CODES,
    exit: 1,
    about: '`trtx check` findings (errors): what the ExecuTorch runtime would refuse when it loads the program.',
  },
  {
    title: 'TensorRT calls',
    space: 'error',
    codes: TRT_CHECK_CODES,
    exit: 1,
    about: '`trtx check` findings on each TensorRT delegate call against its engine\u2019s bindings.',
  },
  {
    title: 'Zero-copy KV caches',
    space: 'error',
    codes: ZC_CHECK_CODES,
    exit: 1,
    about: '`trtx check` findings on the zero-copy KV rules (docs/zero-copy-kv.md).',
  },
  {
    title: 'Runtime hazards',
    space: 'error',
    codes: RT_CODES,
    exit: 1,
    about:
      '`trtx check` findings on what the runtime that executes the program needs; `--runtime` says whose rules apply and decides which are errors.',
  },
  {
    title: 'The check run',
    space: 'error',
    codes: CHECK_CODES,
    exit: EXIT_USAGE,
    exitExceptions: { CHECK_SKIPPED: 1 },
    about: 'About `trtx check` itself and its flags.',
  },
  {
    title: 'Rewrites',
    space: 'error',
    codes: REWRITE_CODES,
    exit: 1,
    exitExceptions: { BUDGET_METHOD_UNKNOWN: 2, BUDGET_DELEGATE_UNKNOWN: 2 },
    about: 'Refusals of the rewrite passes (`rewrite`, `export`, `demo`): nothing is written.',
  },
  {
    title: 'Writing outputs',
    space: 'error',
    codes: OUTPUT_CODES,
    exit: EXIT_USAGE,
    exitExceptions: { WRITE_SOURCE_TRUNCATED: 1 },
    about: 'Writing a program or a report: the target is checked first and written atomically, so a refusal leaves it untouched.',
  },
  {
    title: 'Commands',
    space: 'error',
    codes: COMMAND_CODES,
    exit: EXIT_USAGE,
    exitExceptions: {
      EXPORT_MODEL_STATE_DICT: 1,
      EXPORT_MODEL_TORCHSCRIPT: 1,
      EXPORT_MODEL_PICKLE: 1,
      EXPORT_MODEL_PROGRAM: 1,
      EXPORT_MODEL_AOTI: 1,
      EXPORT_CHECK_FAILED: 1,
      DEMO_CHECK_FAILED: 1,
    },
    about: 'Refusals particular to one command.',
  },
  {
    title: 'Flag warnings',
    space: 'warning',
    codes: FLAG_WARNING_CODES,
    exit: null,
    about:
      'Not refusals: what a flag asks for that is likely not what was meant, logged as `trtx warn: CODE: message` before the work starts; the command goes on.',
  },
  {
    title: 'The Python bridge',
    space: 'error',
    codes: { ...BRIDGE_CODES, ...BRIDGE_TYPE_CODES },
    exit: EXIT_USAGE,
    exitExceptions: BRIDGE_MODEL_REFUSALS,
    about:
      '`trtx export` and its Python subprocess. BRIDGE_<TYPE> codes carry the type of the bridge\u2019s error event (python-bridge/trtx_bridge/errors.py).',
  },
  {
    title: 'The managed Python environment',
    space: 'error',
    codes: PYENV_CODES,
    exit: EXIT_USAGE,
    about: 'Making and probing trtx\u2019s own Python environment (`trtx env`).',
  },
  {
    title: 'The ExecuTorch SDK',
    space: 'error',
    codes: SDK_CODES,
    exit: EXIT_USAGE,
    about:
      'Fetching the C++ SDK the native runner is built against: the pinned executorch wheel, checked and unpacked (`trtx demo`, `verify`, `env`).',
  },
  {
    title: 'The native runner',
    space: 'error',
    codes: RUNNER_CODES,
    exit: EXIT_USAGE,
    exitExceptions: { RUNNER_CRASHED: 1 },
    about:
      'Building and running the bundled native runner (`trtx verify`, `check --runtime`); a runner the program crashes refuses the program.',
  },
  {
    title: 'Bridge warnings',
    space: 'bridge warning',
    codes: BRIDGE_WARNING_CODES,
    exit: null,
    about:
      'Not refusals: the codes of the Python bridge\u2019s warning events, listed in `trtx export`\u2019s `warnings` as `CODE: message`.',
  },
  {
    title: 'Runner report codes',
    space: 'runner report',
    codes: RUNNER_REPORT_CODES,
    exit: 1,
    exitExceptions: RUNNER_ENVIRONMENT_RESULTS,
    about:
      'The `code` of an error in the native runner\u2019s report (schemas/runner-report.schema.json), as `trtx verify` shows them: the runner\u2019s `Error` names (src/codes/runner-report.ts, generated into native-runner/generated/trtx/runtime/error_codes.h).',
  },
];

/** Every Code with its meaning. */
export const CODES = Object.assign({}, ...FAMILIES.filter((f) => f.space === 'error').map((f) => f.codes)) as {
  readonly [C in Code]: string;
};

export function isCode(s: string): s is Code {
  return Object.hasOwn(CODES, s);
}

const EXIT_OF = new Map<string, ExitStatus>();
for (const f of FAMILIES) {
  if (f.space !== 'error' || f.exit === null) continue;
  for (const code of Object.keys(f.codes)) EXIT_OF.set(code, f.exitExceptions?.[code] ?? f.exit);
}

/** The exit status a refusal with `code` ends a command with (the table in exit.ts). */
export function exitStatusOf(code: Code): ExitStatus {
  return EXIT_OF.get(code) ?? EXIT_USAGE;
}

/** The exit status of a runner report code as verify ends with it (RUNNER_ENVIRONMENT_RESULTS). */
export function runnerReportExit(code: RunnerReportCode): ExitStatus {
  return RUNNER_ENVIRONMENT_RESULTS[code] ?? EXIT_REFUSED;
}
