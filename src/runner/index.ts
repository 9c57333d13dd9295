// The native reference runner from TypeScript: build it on first use, run a
// program, get its validated report.
export { BACKEND_PLUGIN_NAME, defaultCacheRoot, defaultSourceDir, ensureRunner, sourceHash, RUNNER_BINARY_NAME } from './build.js';
export type { EnsureRunnerOptions, RunnerBinary, RunnerProgress } from './build.js';
export { runRunner, runnerArgs, RUNNER_TEMP_PREFIX } from './run.js';
export type { RunRunnerOptions, RunnerResult } from './run.js';
export { RunnerReport, REPORT_SCHEMA_ID } from './report.js';
export type { BudgetResolution, DelegateReport, MethodReport, RunnerError, StepReport } from './report.js';
export { decodeTensorFile, encodeTensorFile, TENSOR_FILE_MAGIC, TENSOR_FILE_VERSION } from './tensor-file.js';
export type { TensorFileValue, TensorRecord } from './tensor-file.js';
