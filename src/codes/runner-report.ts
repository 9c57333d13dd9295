// The native runner's report codes: the one source of its `Error` enum.
// scripts/gen-runner-errors.ts writes native-runner/generated/trtx/runtime/
// from this list (the enum, its name table, its exit status and the
// ExecuTorch `Error` each code answers the runtime with), and `npm run
// gen:check` fails when the committed headers are stale. A code's name is the
// `code` of the runner's report (schemas/runner-report.schema.json): never
// rename one.

import { TRT_BLOB_CODES } from './formats.js';

/**
 * The names of ExecuTorch's `Error` (runtime/core/error.h of executorch 1.5):
 * a delegate's init and execute can only answer the runtime with one of them.
 */
export type EtError =
  | 'Internal'
  | 'InvalidState'
  | 'EndOfMethod'
  | 'AlreadyLoaded'
  | 'NotSupported'
  | 'NotImplemented'
  | 'InvalidArgument'
  | 'InvalidType'
  | 'OperatorMissing'
  | 'RegistrationExceedingMaxKernels'
  | 'RegistrationAlreadyRegistered'
  | 'NotFound'
  | 'MemoryAllocationFailed'
  | 'AccessFailed'
  | 'InvalidProgram'
  | 'InvalidExternalData'
  | 'OutOfResources'
  | 'DelegateInvalidCompatibility'
  | 'DelegateMemoryAllocationFailed'
  | 'DelegateInvalidHandle';

/** One runner code: what it means and the ExecuTorch `Error` the TensorRT backend returns for it (never Ok). */
export interface RunnerError {
  readonly et: EtError;
  readonly meaning: string;
}

// The `et` column is the mapping the backend has always made: a refused
// engine, blob or compile spec is the program's fault (InvalidProgram), what
// this machine lacks is NotSupported, and the rest is InvalidArgument.
const RUNNER_OWN_ERRORS = {
  Internal: { et: 'InvalidArgument', meaning: 'a failure inside the runner' },
  InvalidArgument: { et: 'InvalidArgument', meaning: 'an argument is invalid' },
  InvalidState: { et: 'InvalidArgument', meaning: 'an operation in the wrong state' },
  NotSupported: { et: 'InvalidArgument', meaning: 'something the runner or the runtime does not support' },
  NotFound: { et: 'InvalidArgument', meaning: 'a method, file or entry that does not exist' },
  MemoryAllocationFailed: { et: 'DelegateMemoryAllocationFailed', meaning: 'an allocation failed' },
  AccessFailed: { et: 'InvalidArgument', meaning: 'reading the program or a data file failed' },
  InvalidProgram: { et: 'InvalidArgument', meaning: 'the program is not one the runtime loads' },
  InvalidType: { et: 'InvalidArgument', meaning: 'a value has another type than expected' },
  // A version-2 engine's program needs a kernel the runtime lacks.
  OperatorMissing: { et: 'OperatorMissing', meaning: 'a kernel the program calls is not registered' },
  DelegateInvalidCompatibility: { et: 'InvalidArgument', meaning: 'a delegate\u2019s data is not compatible with its backend' },
  DelegateArity: { et: 'InvalidArgument', meaning: 'a delegate call passes another number of arguments than the engine takes' },
  DelegateExecutionFailed: { et: 'InvalidArgument', meaning: 'a delegate failed while executing' },
  CompileSpecInvalid: { et: 'InvalidProgram', meaning: 'a delegate\u2019s compile specs are invalid' },
  EngineFormat: { et: 'InvalidProgram', meaning: 'a reference engine fails its format checks' },
  EngineNotExecutable: {
    et: 'NotSupported',
    meaning: 'the engine is a real TensorRT plan, which the runner does not execute (exit 3)',
  },
  DeviceUnavailable: {
    et: 'NotSupported',
    meaning: '--device cuda without a GPU or a CUDA build, or a program planned for a GPU the machine lacks (exit 3)',
  },
  CudaError: { et: 'InvalidArgument', meaning: 'a CUDA call failed' },
  DeviceInitialState: {
    et: 'InvalidArgument',
    meaning: 'a buffer planned in device memory has initial state the runtime cannot load',
  },
  BackendMissing: { et: 'InvalidArgument', meaning: 'a delegate\u2019s backend is not in this runner (exit 3)' },
  ExecuTorchAbort: { et: 'InvalidArgument', meaning: 'the ExecuTorch runtime stopped the process (ET_CHECK)' },
  DeviceMismatch: {
    et: 'InvalidArgument',
    meaning: 'a delegate\u2019s devices disagree: target_device, the blob\u2019s device_id, or an argument in another device\u2019s memory',
  },
  PlannedMemoryLimit: {
    et: 'InvalidArgument',
    meaning: 'the planned arenas need more host memory than --max-planned-bytes (default: physical memory) (exit 3)',
  },
} as const satisfies Record<string, RunnerError>;

/** Every blob codec refusal is the program's: the runtime reads it as an invalid program. */
const TRT_BLOB_ET: EtError = 'InvalidProgram';

export type RunnerReportCode = keyof typeof RUNNER_OWN_ERRORS | keyof typeof TRT_BLOB_CODES;

/**
 * Every runner code in the enum's order (after Ok, which is never reported):
 * its own, then the blob codec's (TRT_BLOB_CODES), which the runner shares.
 */
export const RUNNER_ERRORS: { readonly [C in RunnerReportCode]: RunnerError } = {
  ...RUNNER_OWN_ERRORS,
  ...(Object.fromEntries(
    Object.entries(TRT_BLOB_CODES).map(([c, m]) => [c, { et: TRT_BLOB_ET, meaning: `the blob codec\u2019s ${c}: ${m}` }]),
  ) as { readonly [C in keyof typeof TRT_BLOB_CODES]: RunnerError }),
};

/** The `code` of an error in the runner's report, and its meaning (docs/codes.md). */
export const RUNNER_REPORT_CODES: { readonly [C in RunnerReportCode]: string } = Object.fromEntries(
  Object.entries(RUNNER_ERRORS).map(([c, e]) => [c, e.meaning]),
) as { readonly [C in RunnerReportCode]: string };
