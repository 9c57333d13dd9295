// trtx env [--json]: the Python environment trtx exports with and the
// ExecuTorch C++ SDK the native runner is built against. Makes the managed
// environment on first use (with progress), so CI and a new user can prepare
// everything in one visible step.
import type { Command } from 'commander';
import { ensurePythonEnv, executorchSdk, type PythonEnv } from '../../pyenv/index.js';
import { isTrtxError } from '../../util/errors.js';
import { EXIT_OK, type Ctx, type GlobalOptions } from '../context.js';
import { action } from '../action.js';

interface EnvOptions extends GlobalOptions {
  python?: string;
}

export interface EnvReport {
  schema: 'trtx.env/1';
  python: string;
  source: PythonEnv['source'];
  dir: string | null;
  lock_hash: string;
  created: boolean;
  versions: { python: string; torch: string | null; executorch: string | null; torch_tensorrt: string | null };
  executorch_sdk: string | null;
  mismatches: string[];
}

export function envReport(env: PythonEnv): EnvReport {
  let sdk: string | null = null;
  try {
    sdk = executorchSdk(env).root;
  } catch (e) {
    if (!isTrtxError(e)) throw e;
  }
  return {
    schema: 'trtx.env/1',
    python: env.python,
    source: env.source,
    dir: env.dir,
    lock_hash: env.lockHash,
    created: env.created,
    versions: { python: env.probe.version, ...env.probe.packages },
    executorch_sdk: sdk,
    mismatches: env.mismatches,
  };
}

function render(r: EnvReport): string[] {
  const v = r.versions;
  const named = (x: string | null) => x ?? 'not installed';
  return [
    `python: ${r.python} (${r.source === 'managed' ? `managed, lock ${r.lock_hash}` : `named by ${r.source}`})`,
    `  Python ${v.python}, torch ${named(v.torch)}, executorch ${named(v.executorch)}, torch-tensorrt ${named(v.torch_tensorrt)}`,
    `  ExecuTorch C++ SDK: ${r.executorch_sdk ?? 'none'}`,
    ...r.mismatches.map((m) => `  differs from the lock: ${m}`),
  ];
}

export function registerEnv(program: Command): void {
  program
    .command('env')
    .description("show (and on first use create) trtx's Python environment and the ExecuTorch SDK")
    .option('--python <path>', 'describe this interpreter instead of the managed environment (also TRTX_PYTHON)')
    .option('--json', 'machine-readable output (schemas/env.schema.json)')
    .addHelpText(
      'after',
      `
The managed environment is made from python-bridge/requirements.lock
(torch 2.13.0, executorch 1.5.1) under $TRTX_CACHE_DIR or ~/.cache/trtx on
first use and reused after; trtx export uses it unless --python or
TRTX_PYTHON names another interpreter.

Examples:
  trtx env
  trtx env --json`,
    )
    .action(
      action<EnvOptions>(async (ctx: Ctx, opts) => {
        const env = await ensurePythonEnv({
          python: opts.python,
          onProgress: (p) => {
            if (!ctx.json && p.phase !== 'cached') ctx.log.info(p.message);
          },
        });
        const report = envReport(env);
        if (ctx.json) ctx.emitJson(report);
        else for (const line of render(report)) ctx.print(line);
        return EXIT_OK;
      }),
    );
}
