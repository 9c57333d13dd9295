// Benchmark: every command on Llama-3.2-shaped decoders at real size (issue 36).
// For each shape and dtype: the model as a torch.export archive
// (bench/real-size/make_model.py: python-bridge/bench_models' decoder, weights
// made from their names), then `trtx export --engine reference --budget B`,
// `inspect`, `check`, `rewrite -o --budget` against `cp` of the same file,
// `rewrite -o --zero-copy-kv` and `verify --zero-copy-kv --steps N` against
// eager PyTorch, each timed with its peak RSS (GNU time). Export's peak is
// set against its bound, 2.5x the weights + 2 GiB (src/export/memory-need.ts).
// Prints one markdown row per command.
//
//   npx tsx bench/real-size.ts [--shape ci|300m|1b|3b] [--dtype float32,bfloat16,float16] [--budget 1GiB]
//     [--steps 3] [--max-cache 1024] [--dir /work/big/real-size] [--keep]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { exportMemoryNeed } from '../src/export/memory-need.js';
import { modelKind } from '../src/export/model-kind.js';
import { arg, ensureBundle, timed, wall, type Run } from './lib.js';

const shape = arg('--shape', 'ci');
const dtypes = arg('--dtype', 'float32,bfloat16').split(',');
const budget = arg('--budget', '1GiB');
const steps = arg('--steps', '3');
const maxCache = arg('--max-cache', '1024');
const dir = resolve(arg('--dir', 'bench/out/real-size'));
const keep = process.argv.includes('--keep');
const trtx = (...args: string[]) => [process.execPath, 'bin/trtx', ...args];
const GB = 1e9;

ensureBundle();
// The pinned environment `trtx env` makes (keyed by its lock's hash), unless --python names another.
const PYTHON =
  arg('--python', '') ||
  (JSON.parse(execFileSync(process.execPath, ['bin/trtx', 'env', '--json'], { encoding: 'utf8' })) as { python: string }).python;
mkdirSync(dir, { recursive: true });
const rows: string[] = ['| model | command | seconds | peak RSS | result |', '| --- | --- | --- | --- | --- |'];
const gib = (kib: number) => `${(kib / 1024 / 1024).toFixed(2)} GiB`;
const last = (r: Run, re: RegExp) =>
  (r.stdout + r.stderr)
    .split('\n')
    .find((l) => re.test(l))
    ?.trim() ?? '';

function row(model: string, command: string, r: Run, result: string): void {
  rows.push(
    `| ${model} | ${command} | ${r.seconds.toFixed(2)} | ${gib(r.maxRssKiB)} | ${r.status === 0 ? 'exit 0' : `exit ${r.status}`}${result ? `: ${result}` : ''} |`,
  );
  console.log(rows.at(-1));
  if (r.status !== 0) console.error((r.stdout + r.stderr).split('\n').slice(-15).join('\n'));
}

for (const dtype of dtypes) {
  const name = `llama32-${shape}-${dtype}`;
  const archive = join(dir, `${name}.pt2`);
  const pte = join(dir, `${name}.pte`);
  if (!existsSync(archive)) {
    const made = timed([
      PYTHON,
      'bench/real-size/make_model.py',
      '--shape',
      shape,
      '--dtype',
      dtype,
      '--max-cache',
      maxCache,
      '--out',
      archive,
    ]);
    row(name, 'make the archive (transformers, torch.export.save)', made, last(made, /^wrote /).replace(/^wrote \S+: /, ''));
    if (made.status !== 0) continue;
  }
  rmSync(pte, { force: true });
  const exported = timed(trtx('export', archive, '--engine', 'reference', '--budget', budget, '-o', pte, '--force'));
  const weights = (await modelKind(archive, statSync(archive).size)).weightBytes ?? NaN;
  const bound = exportMemoryNeed(weights);
  row(
    name,
    `export --engine reference --budget ${budget}`,
    exported,
    `${((statSync(pte, { throwIfNoEntry: false })?.size ?? 0) / GB).toFixed(2)} GB program; peak ${((exported.maxRssKiB * 1024) / weights).toFixed(2)}x the ${(weights / GB).toFixed(2)} GB of weights (bound ${(bound / GB).toFixed(2)} GB: ${exported.maxRssKiB * 1024 <= bound ? 'within' : 'OVER'})`,
  );
  if (exported.status !== 0) continue;
  const inspect = timed(trtx('inspect', pte));
  row(name, 'inspect', inspect, last(inspect, /weights .* streamable/));
  const check = timed(trtx('check', pte));
  row(name, 'check', check, last(check, /^\d+ errors?, \d+ warnings?/));
  const cpSeconds = wall(['cp', '--sparse=never', pte, join(dir, 'cp.pte')]);
  rmSync(join(dir, 'cp.pte'), { force: true });
  const rebudget = timed(trtx('rewrite', pte, '-o', join(dir, 'rebudget.pte'), '--budget', '512MiB', '--force'));
  row(
    name,
    `rewrite -o --budget 512MiB (cp: ${cpSeconds.toFixed(2)} s)`,
    rebudget,
    `${(cpSeconds / rebudget.seconds).toFixed(2)}x cp's speed`,
  );
  rmSync(join(dir, 'rebudget.pte'), { force: true });
  const zc = join(dir, `${name}.zc.pte`);
  const rewrite = timed(trtx('rewrite', pte, '-o', zc, '--zero-copy-kv', '--force'));
  row(name, 'rewrite -o --zero-copy-kv', rewrite, last(rewrite, /stamped zero_copy_kv|caches? moved/));
  rmSync(zc, { force: true });
  const verify = timed(trtx('verify', '--zero-copy-kv', pte, '--steps', steps, '--json'));
  let verdict: string;
  try {
    const v = JSON.parse(verify.stdout) as {
      assertions?: { ok: boolean }[];
      reference?: unknown;
      runs?: { variant: string; caller_stream: boolean; fresh_state: boolean; staging: { step_median_us: number | null }[] }[];
    };
    const worst = JSON.stringify(v.reference ?? {}).match(/"max_abs[^"]*":\s*([\d.e+-]+)/g) ?? [];
    const maxAbs = Math.max(...worst.map((w) => Number(w.split(':')[1])));
    const step = (variant: string) =>
      v.runs?.find((r) => r.variant === variant && !r.caller_stream && !r.fresh_state)?.staging[0]?.step_median_us;
    const ms = (us: number | null | undefined) => (us == null ? '?' : `${(us / 1000).toFixed(0)} ms`);
    verdict = `${v.assertions?.filter((c) => c.ok).length ?? '?'} of ${v.assertions?.length ?? '?'} checks passed, max abs vs eager ${maxAbs.toExponential(2)}; median step staged ${ms(step('staged'))}, zero-copy ${ms(step('zero-copy'))} (CPU)`;
  } catch {
    verdict = last(verify, /verified|failed/);
  }
  row(name, `verify --zero-copy-kv --steps ${steps}`, verify, verdict);
  if (!keep) for (const f of [pte, `${pte}.reference.json`]) rmSync(f, { force: true });
}
console.log(
  `\ncommand: npx tsx bench/real-size.ts --shape ${shape} --dtype ${dtypes.join(',')} --budget ${budget} --steps ${steps} --max-cache ${maxCache}`,
);
console.log(rows.join('\n'));
