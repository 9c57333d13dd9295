// npm run bench [-- NAME [ARGS...]] | npm run bench -- --list
// Runs the benchmark scripts of this folder: all of them in turn with their
// defaults, or the one named with its own arguments. Each prints the command
// it ran and its tables; bench/README.md holds the measured results.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BENCHES: Record<string, string> = {
  'first-run': 'the first npx trtx demo of a fresh clone with an empty HOME: time to first output, to completion, longest silence',
  pte: 'inspect wall time and RSS at 40 MB vs 4 GiB of segments; rewrite throughput vs cp',
  check: 'check at 40 MB vs 4 GiB of engines; rewrite --in-place --budget on 4 GiB',
  'rewrite-copy': 'rewrite -o of a 3 GiB program vs cp --sparse=never',
  'real-size':
    'every command on Llama-3.2-shaped decoders (--shape ci|300m|1b|3b, --dtype): export peak RSS against 2.5x the weights + 2 GiB, inspect/check, rewrite vs cp, verify',
  'big-metadata': 'inspect and check time and RSS on 5 GB of version-3 engine weights vs 5 MB; rewrite -o --budget vs cp',
  'zero-copy': 'staging bytes per decode step at seed scale, staged vs zero-copy; rewrite time vs cp',
  hostile: 'check and inspect --json time and RSS per input byte on sound, shared and repeated programs',
  giants:
    'check and inspect --json peak RSS on the real-size hostile shapes: many delegates on one segment, 2 GiB engines and FlatBuffers (sparse); --bin for a before checkout',
  'pickle-scan':
    "export's model-file sniff on hostile pickles: the old regular expressions vs the linear scan of a pickle's globals, a deflate bomb inflated whole vs to the 16 MiB ceiling",
  html: 'inspect --html write time and headless-Chromium open time at 40 MB vs 4 GiB of engines',
  'bridge-exit': "the Python bridge's exit: interpreter teardown CPU vs os._exit, and the bridge's result-to-exit time",
  'npm-test-ab':
    'npm test of two commits back to back in clean clones (npm run bench -- npm-test-ab [OLD [NEW]], HEAD~1 and HEAD by default)',
  'edge-yaml': "import executorch.exir (every export pays it) with ruamel.yaml's C parser vs pure-Python YAML, CPU per process",
  zoo: 'export --engine reference and verify --zero-copy-kv wall time on a tiny HF decoder of the zoo, vs python -c "import torch" and check',
};

const script = (name: string) => fileURLToPath(new URL(`./${name}.ts`, import.meta.url));

function list(): void {
  const width = Math.max(...Object.keys(BENCHES).map((n) => n.length));
  for (const [name, what] of Object.entries(BENCHES)) console.log(`  ${name.padEnd(width)}  ${what}  (bench/${name}.ts)`);
}

function run(name: string, args: string[]): number {
  console.log(`\n== bench ${name}: npx tsx bench/${name}.ts${args.length ? ' ' + args.join(' ') : ''}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', script(name), ...args], { stdio: 'inherit' });
  return r.status ?? 1;
}

const [name, ...args] = process.argv.slice(2);
if (name === '--list' || name === '--help' || name === '-h') {
  console.log('npm run bench [-- NAME [ARGS...]]: every benchmark with its defaults, or the one named');
  list();
  process.exit(0);
}
if (name !== undefined && !(name in BENCHES)) {
  console.error(`bench: no benchmark named ${JSON.stringify(name)}; these exist:`);
  list();
  process.exit(2);
}
for (const n of Object.keys(BENCHES)) if (!existsSync(script(n))) throw new Error(`bench/${n}.ts is missing`);
let failed = 0;
for (const n of name === undefined ? Object.keys(BENCHES) : [name]) if (run(n, name === undefined ? [] : args) !== 0) failed++;
process.exit(failed ? 1 : 0);
