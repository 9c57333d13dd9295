// Benchmark: what ruamel.yaml's C parser saves every Python process that
// imports ExecuTorch (each `trtx export`, the corpus and zoo runs). Importing
// executorch.exir parses the edge dialect's edge.yaml (138 KB) with
// ruamel.yaml typ="safe" (executorch/exir/dialects/edge/_ops.py); ruamel.yaml
// parses in C when ruamel.yaml.clib is installed, which ExecuTorch does not
// ask for and python-bridge/requirements.in pins. Measured in the same run,
// in trtx's managed environment:
//   pure  python -c "import executorch.exir" with the C parser hidden
//         (sys.modules['_ruamel_yaml'] = None: the environment without clib)
//   C     python -c "import executorch.exir"
// CPU seconds (user + sys, GNU time) and wall seconds, medians of --runs,
// the two alternating.
//
//   npx tsx bench/edge-yaml.ts [--runs 5]
import { availableParallelism, loadavg } from 'node:os';
import { ensurePythonEnv } from '../src/pyenv/index.js';
import { cpuOf, median } from './lib.js';

const runsAt = process.argv.indexOf('--runs');
const RUNS = runsAt > 0 ? Number(process.argv[runsAt + 1]) : 5;
const IMPORT = 'import executorch.exir, ruamel.yaml.main as m; assert (m.CParser is None) == HIDDEN';
const code = (hidden: boolean) =>
  `import sys; HIDDEN = ${hidden ? 'True' : 'False'}; ${hidden ? "sys.modules['_ruamel_yaml'] = None; " : ''}${IMPORT}`;

const { python } = await ensurePythonEnv({ env: process.env });
const pure: { cpu: number; wall: number }[] = [];
const c: { cpu: number; wall: number }[] = [];
for (let i = 0; i < RUNS; i++) {
  pure.push(cpuOf(python, code(true)));
  c.push(cpuOf(python, code(false)));
}
const f = (x: number) => `${x.toFixed(2)} s`;
const cpuPure = median(pure.map((r) => r.cpu));
const cpuC = median(c.map((r) => r.cpu));
console.log(
  `command: npx tsx bench/edge-yaml.ts --runs ${RUNS}   (${availableParallelism()} cores, load ${loadavg()[0].toFixed(1)}, ${python})`,
);
console.log(`  import executorch.exir, pure-Python YAML: ${f(cpuPure)} CPU, ${f(median(pure.map((r) => r.wall)))} wall`);
console.log(`  import executorch.exir, C YAML parser:    ${f(cpuC)} CPU, ${f(median(c.map((r) => r.wall)))} wall`);
console.log(`  saved per process: ${f(cpuPure - cpuC)} CPU (${((cpuC / cpuPure) * 100).toFixed(0)}% of the pure import's CPU left)`);
