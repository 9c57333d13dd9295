// Benchmark: how long a user waits on a tiny Hugging Face decoder of the model
// zoo (python-bridge/zoo/, `npm run zoo`): `trtx export MODEL.pt2 --engine
// reference --budget 8GiB` (Python's start, torch's import, the lowering and
// the eager reference run included) and `trtx verify --zero-copy-kv` of the
// program it wrote, each against a baseline measured in the same run and
// interleaved with it: `python -c "import torch"` in trtx's managed
// environment for export (the floor any export pays), `trtx check` of the same
// program for verify (node's start and reading the program). Medians of
// --runs rounds. Targets: export <= 30 s on 2 cores, verify <= 5 s.
//
//   npx tsx bench/zoo.ts [--model hf-llama] [--runs 5] [--dir bench/out/zoo]
import { mkdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureZoo } from '../scripts/zoo-build.js';
import { BIN } from '../scripts/zoo-steps.js';
import { arg, ensureBundle, median, timed, type Run } from './lib.js';

const modelName = arg('--model', 'hf-llama');
const runs = Number(arg('--runs', '5'));
const dir = resolve(arg('--dir', 'bench/out/zoo'));
const TARGETS = { export: 30, verify: 5 };

const zoo = await ensureZoo({ onProgress: (m) => console.error(m) });
const found = zoo.manifest.models.find((m) => m.name === modelName);
if (!found) throw new Error(`the zoo has no model ${modelName} (it has ${zoo.manifest.models.map((m) => m.name).join(', ')})`);
const model = found;
ensureBundle();
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const pte = join(dir, `${model.name}.pte`);
const { TRTX_PYTHON: _named, ...base } = process.env;
const env = { ...base, NO_COLOR: '1' };

const commands = {
  'python -c "import torch"': [zoo.python, '-c', 'import torch'],
  'trtx export --engine reference --budget 8GiB': [
    process.execPath,
    BIN,
    'export',
    join(zoo.dir, model.file),
    '--engine',
    'reference',
    '--budget',
    '8GiB',
    '-o',
    pte,
  ],
  'trtx check': [process.execPath, BIN, 'check', pte],
  'trtx verify --zero-copy-kv': [process.execPath, BIN, 'verify', '--zero-copy-kv', pte],
} as const;
type Name = keyof typeof commands;
const times: Record<Name, number[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []])) as never;

function must(name: Name, r: Run): void {
  if (r.status === 0) return;
  console.error(`${name} failed (exit ${r.status}):\n${(r.stdout + r.stderr).split('\n').slice(-12).join('\n')}`);
  const measured = Object.entries(times).filter(([, t]) => t.length > 0);
  for (const [n, t] of measured) console.error(`measured so far: ${n}: ${t.map((x) => x.toFixed(2)).join(', ')} s`);
  console.error(`\nnpx tsx bench/zoo.ts --model ${modelName} --runs ${runs}: cannot measure until ${name} succeeds on ${model.file}`);
  process.exit(1);
}

for (let round = 0; round < runs; round++) {
  // Interleaved: each command and its baseline see the same load.
  for (const name of Object.keys(commands) as Name[]) {
    if (name.startsWith('trtx export')) rmSync(pte, { force: true });
    const r = timed([...commands[name]], env);
    must(name, r);
    times[name].push(r.seconds);
  }
  console.error(
    `round ${round + 1}/${runs}: ${Object.values(times)
      .map((t) => t.at(-1)!.toFixed(2))
      .join(' / ')} s`,
  );
}

const m = (n: Name) => median(times[n]);
const fmt = (s: number) => `${s.toFixed(2)} s`;
const row = (what: string, n: Name, baseline: Name | null, target: number | null) =>
  `| ${what} | ${fmt(m(n))} | ${fmt(Math.min(...times[n]))} | ${baseline ? `${(m(n) / m(baseline)).toFixed(1)}x` : '1x'} | ${
    target === null ? '' : `<= ${target} s: ${m(n) <= target ? 'met' : 'NOT met'}`
  } |`;
console.log(`npx tsx bench/zoo.ts --model ${modelName} --runs ${runs}`);
console.log(
  `${model.name}: ${model.architecture}, ${model.params} parameters, transformers ${model.transformers}; ${availableParallelism()} cores, node ${process.version}\n`,
);
console.log('| command | median | min | vs its baseline | target |');
console.log('| --- | --- | --- | --- | --- |');
console.log(row('`python -c "import torch"` (export baseline)', 'python -c "import torch"', null, null));
console.log(
  row(
    '`trtx export --engine reference --budget 8GiB`',
    'trtx export --engine reference --budget 8GiB',
    'python -c "import torch"',
    TARGETS.export,
  ),
);
console.log(row('`trtx check` (verify baseline)', 'trtx check', null, null));
console.log(row('`trtx verify --zero-copy-kv`', 'trtx verify --zero-copy-kv', 'trtx check', TARGETS.verify));
