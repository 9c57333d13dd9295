// trtx env [--json]: the ExecuTorch C++ SDK the native runner is built
// against (the pinned executorch wheel, unpacked: src/sdk) and the Python
// environment trtx exports with. Fetches the SDK and makes the managed
// environment on first use (with progress), so CI and a new user can
// prepare everything in one visible step.
import type { Command } from 'commander';
import { helpAfter } from '../help.js';
import type { EnvReport } from '../env-json.js';
import { ensurePythonEnv, type PythonEnv } from '../../pyenv/index.js';
import { ensureExecutorchSdk, type ExecutorchSdk } from '../../sdk/index.js';
import { EXIT_OK, type Ctx, type GlobalOptions } from '../context.js';
import { action } from '../action.js';
import type { CliSession } from '../session.js';
import { pythonEnvProgress } from '../python-env-progress.js';
import { runnerBuildProgress } from '../runner-progress.js';

interface EnvOptions extends GlobalOptions {
  python?: string;
}

export function envReport(env: PythonEnv, sdk: ExecutorchSdk): EnvReport {
  return {
    schema: 'trtx.env/1',
    python: env.python,
    source: env.source,
    dir: env.dir,
    lock_hash: env.lockHash,
    created: env.created,
    versions: { python: env.probe.version, ...env.probe.packages },
    executorch_sdk: sdk.root,
    sdk: { version: sdk.version, wheel: sdk.wheel, sha256: sdk.sha256, created: sdk.created },
    mismatches: env.mismatches,
  };
}

function render(r: EnvReport): string[] {
  const v = r.versions;
  const named = (x: string | null) => x ?? 'not installed';
  return [
    `ExecuTorch C++ SDK ${r.sdk.version} (the native runner's): ${r.executorch_sdk}`,
    `  from ${r.sdk.wheel} (sha256 ${r.sdk.sha256.slice(0, 16)}...)`,
    `python: ${r.python} (${r.source === 'managed' ? `managed, lock ${r.lock_hash}` : `named by ${r.source}`})`,
    `  Python ${v.python}, torch ${named(v.torch)}, executorch ${named(v.executorch)}, torch-tensorrt ${named(v.torch_tensorrt)}`,
    ...r.mismatches.map((m) => `  differs from the lock: ${m}`),
  ];
}

export function registerEnv(program: Command, session: CliSession): void {
  program
    .command('env')
    .description("show (and on first use fetch or create) the ExecuTorch SDK the runner is built against and trtx's Python environment")
    .option('--python <path>', 'describe this interpreter instead of the managed environment (also TRTX_PYTHON)')
    .option('--json', 'machine-readable output (schemas/env.schema.json)')
    .addHelpText(
      'after',
      helpAfter({
        about: `The SDK is the pinned executorch wheel (python-bridge/executorch-sdk.json,
about 19 MB) unpacked under $TRTX_CACHE_DIR or ~/.cache/trtx; trtx demo and
verify need only it. The managed environment (about 1.5 GB) is made from
python-bridge/requirements.lock (torch 2.13.0, executorch 1.5.1) in the same
cache on first use and reused after; trtx export uses it unless --python or
TRTX_PYTHON names another interpreter. docs/install.md says more.`,
        exit: [
          [0, 'shown'],
          [2, 'any error: the SDK cannot be fetched, the environment cannot be made, an interpreter that does not run'],
        ],
        schema: 'schemas/env.schema.json',
        examples: ['trtx env', 'trtx env --json'],
      }),
    )
    .action(
      action<EnvOptions>(session, async (ctx: Ctx, opts) => {
        const quiet = ctx.json || ctx.quiet;
        const sdkLines = runnerBuildProgress(ctx);
        const sdk = await ensureExecutorchSdk({
          env: ctx.env,
          cwd: ctx.cwd,
          signal: ctx.signal,
          onProgress: (p) => {
            if (p.phase !== 'cached' && p.phase !== 'ready') sdkLines({ phase: 'sdk', message: p.message });
          },
        });
        const envLines = pythonEnvProgress(ctx);
        const env = await ensurePythonEnv({
          // An interpreter's path means the run's folder; a bare name is looked up on PATH.
          python: opts.python?.includes('/') ? ctx.at(opts.python) : opts.python,
          env: ctx.env,
          cwd: ctx.cwd,
          signal: ctx.signal,
          onProgress: (p) => {
            if (!quiet) envLines(p);
          },
        });
        const report = envReport(env, sdk);
        if (ctx.json) ctx.emitJson(report);
        else for (const line of render(report)) ctx.print(line);
        return EXIT_OK;
      }),
    );
}
