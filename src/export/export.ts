// `trtx export`: the Python bridge exports and partitions the model into a
// temporary `.pte`; TypeScript then finishes it with the same passes and
// checks as `trtx rewrite` and `trtx check` (budget, zero-copy KV, every
// check) and writes OUT atomically. Any failure leaves no OUT and no
// temporary file.

import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { checkPython, resolvePython } from '../bridge/python.js';
import { runBridge, type RunBridgeOptions } from '../bridge/run.js';
import type { BridgeEvent, CheckResult, ExportResult } from '../bridge/protocol.js';
import { PROTOCOL_VERSION } from '../bridge/protocol.js';
import { runChecks } from '../checks/run.js';
import type { Diagnostic } from '../checks/diagnostic.js';
import { budgetPass } from '../passes/budget.js';
import type { PassReport } from '../passes/pass.js';
import { readTrtBlobs, zeroCopyKvPass } from '../passes/zero-copy.js';
import { unsoundInput } from '../passes/precondition.js';
import { writeFromSource } from '../pte/copy.js';
import { openPte } from '../pte/open.js';
import { trackPath } from '../util/cleanup.js';
import { TrtxError } from '../util/errors.js';
import { checkModelFile } from './model-file.js';

export interface ExportOptions {
  model: string;
  output: string;
  budget?: bigint;
  zeroCopyKv?: boolean;
  shareCache?: boolean;
  methods?: string[];
  allowPickle?: boolean;
  python?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  onEvent?: (e: BridgeEvent) => void;
  onStderr?: (text: string) => void;
  onWriteProgress?: (done: number, total: number) => void;
  /** Extra bridge environment (tests put the Python test doubles here). */
  bridgeEnv?: Record<string, string | undefined>;
}

export interface ExportSummary {
  schema: 'trtx.export/1';
  model: string;
  output: string;
  python: { command: string; source: string; version: string };
  versions: CheckResult['versions'];
  methods: ExportResult['methods'];
  bridge: { zero_copy_kv: boolean; zero_copy_kv_path: ExportResult['zero_copy_kv_path']; weight_streaming: ExportResult['weight_streaming'] };
  passes: { pass: string; changed: boolean; lines: string[] }[];
  warnings: string[];
  diagnostics: Diagnostic[];
  file_size: number;
}

export async function exportModel(opts: ExportOptions): Promise<ExportSummary> {
  // The model file before Python: a wrong path is not a missing package.
  await checkModelFile(opts.model);
  const python = resolvePython({ python: opts.python });
  const base: RunBridgeOptions = { python: python.command, env: opts.bridgeEnv, signal: opts.signal, onStderr: opts.onStderr };
  // The import check first: a missing package is named before any work starts.
  const check = await checkPython({ ...base, timeoutMs: 120_000 });

  const output = resolve(opts.output);
  const temp = join(dirname(output), `.${basename(output)}.bridge-${randomBytes(6).toString('hex')}.pte`);
  const warnings: string[] = [];
  const untrack = trackPath(temp);
  try {
    const result = await runBridge(
      {
        protocol: PROTOCOL_VERSION,
        model: resolve(opts.model),
        output: temp,
        methods: opts.methods?.length ? opts.methods : null,
        budget_bytes: opts.budget === undefined ? null : opts.budget.toString(),
        zero_copy_kv: Boolean(opts.zeroCopyKv),
        allow_pickle: Boolean(opts.allowPickle),
        check_only: false,
      },
      {
        ...base,
        timeoutMs: opts.timeoutMs,
        onEvent: (e) => {
          if (e.event === 'warning') warnings.push(`${e.code ? e.code + ': ' : ''}${e.message}`);
          opts.onEvent?.(e);
        },
      },
    );
    if (result.mode !== 'export') throw new TrtxError('BRIDGE_PROTOCOL', opts.model, 'the bridge answered an export with a check result', { kind: 'usage' });

    const pte = await openPte(temp);
    try {
      const unsound = unsoundInput(pte);
      if (unsound) throw unsound.error;
      const passes: PassReport[] = [];
      // The bridge may already have baked the budget; setting it again is idempotent and proves it.
      if (opts.budget !== undefined) passes.push(budgetPass({ budget: opts.budget })(pte.program));
      // Zero-copy: the caches of a staged export (zero_copy_kv_path "trtx") are
      // un-staged here, as `trtx rewrite --zero-copy-kv` does; on Torch-TensorRT's
      // own zero-copy export the pass finds them un-staged and checks them.
      if (opts.zeroCopyKv) passes.push(zeroCopyKvPass(await readTrtBlobs(pte), { shareCache: Boolean(opts.shareCache) })(pte.program));
      const checked = await runChecks(pte, { requireZeroCopyKv: Boolean(opts.zeroCopyKv) });
      if (checked.summary.errors > 0) {
        const first = checked.diagnostics.find((d) => d.severity === 'error')!;
        throw Object.assign(
          new TrtxError('EXPORT_CHECK_FAILED', first.location, `the exported program fails ${checked.summary.line}; first: ${first.code}: ${first.message}`, {
            hint: first.hint,
          }),
          { diagnostics: checked.diagnostics },
        );
      }
      const written = await writeFromSource(pte, output, { onProgress: opts.onWriteProgress, signal: opts.signal });
      return {
        schema: 'trtx.export/1',
        model: opts.model,
        output,
        python: { command: python.command, source: python.source, version: check.python.version },
        versions: result.versions,
        methods: result.methods,
        bridge: { zero_copy_kv: result.zero_copy_kv, zero_copy_kv_path: result.zero_copy_kv_path, weight_streaming: result.weight_streaming },
        passes: passes.map((p) => ({ pass: p.pass, changed: p.changed, lines: p.lines })),
        warnings: [...warnings, ...passes.flatMap((p) => p.warnings)],
        diagnostics: checked.diagnostics,
        file_size: written.fileSize,
      };
    } finally {
      await pte.close();
    }
  } finally {
    await rm(temp, { force: true });
    untrack();
  }
}
