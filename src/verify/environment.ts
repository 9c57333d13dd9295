// The runner's results that say the program cannot run on this machine, not
// that it failed: each is an environment result (exit 2) with its own code
// and the way out.

import type { CommandCode, RunnerReportCode } from '../codes/index.js';

export const ENVIRONMENT: Partial<Record<RunnerReportCode, { code: CommandCode; hint: string }>> = {
  EngineNotExecutable: {
    code: 'VERIFY_TENSORRT_PLAN',
    hint: 'verify real TensorRT plans with the ExecuTorch runtime built with the Torch-TensorRT delegate; the bundled runner executes trtx reference engines only',
  },
  BackendMissing: {
    code: 'VERIFY_BACKEND_MISSING',
    hint: 'the bundled runner has the TensorRT backend only; run the program where its other backends are built in',
  },
  OperatorMissing: {
    code: 'VERIFY_KERNEL_MISSING',
    hint: 'the bundled runner links ExecuTorch\u2019s portable and optimized CPU kernels; run the program where the kernel libraries it calls are linked',
  },
  PlannedMemoryLimit: {
    code: 'VERIFY_MEMORY_LIMIT',
    hint: 'the program plans more host memory than this machine has; verify it on a machine where it fits',
  },
  DeviceUnavailable: {
    code: 'VERIFY_NO_GPU',
    hint: 'drop --device cuda to verify on the CPU, or run on a machine with the GPUs the program targets and a CUDA build of the runner',
  },
};

export const environmentOf = (code: string) => (Object.hasOwn(ENVIRONMENT, code) ? ENVIRONMENT[code as RunnerReportCode] : undefined);
