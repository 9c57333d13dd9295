// Benchmark: what the Python bridge's exit costs `trtx export`. Once the
// bridge has sent its result, an ordinary interpreter exit still tears down
// torch, torch._dynamo, torch._inductor and executorch.exir (their objects,
// their libraries' atexit hooks) while trtx waits; the bridge ends with
// os._exit after flushing (python-bridge/trtx_bridge/__main__.py, _leave).
// Measured in the same run, in trtx's managed environment:
//   baseline  python -c "import torch, executorch.exir"              (ordinary exit)
//   skipped   python -c "import torch, executorch.exir; os._exit(0)" (no teardown)
//   bridge    python -m trtx_bridge, a check request (the same imports): the
//             time from its result event to its exit
// CPU seconds (user + sys, GNU time) and wall seconds, medians of --runs.
//
//   npx tsx bench/bridge-exit.ts [--runs 5]
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { bridgeEnv } from '../src/bridge/env.js';
import { ensurePythonEnv } from '../src/pyenv/index.js';
import { cpuOf, median } from './lib.js';

const runsAt = process.argv.indexOf('--runs');
const RUNS = runsAt > 0 ? Number(process.argv[runsAt + 1]) : 5;
const IMPORTS = 'import torch, executorch.exir';

/** Seconds from the bridge's result event (a line on its stdout) to its exit. */
function resultToExit(python: string): Promise<number> {
  const request = { protocol: 2, model: '', output: '', methods: null, budget_bytes: null, zero_copy_kv: false };
  const body = JSON.stringify({ ...request, allow_pickle: false, check_only: true, engine: 'reference', reference: null });
  return new Promise((done, fail) => {
    const child = spawn(python, ['-m', 'trtx_bridge'], { env: bridgeEnv({ base: process.env }), stdio: ['pipe', 'pipe', 'ignore'] });
    let resultAt = -1;
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      if (resultAt < 0 && /"event"\s*:\s*"result"/.test(buffered)) resultAt = performance.now();
    });
    child.on('error', fail);
    child.on('close', (status) => {
      if (status !== 0 || resultAt < 0) fail(new Error(`the bridge exited ${status} ${resultAt < 0 ? 'without a result' : ''}`));
      else done((performance.now() - resultAt) / 1000);
    });
    child.stdin.end(body);
  });
}

const { python } = await ensurePythonEnv({ env: process.env });
const baseline: { cpu: number; wall: number }[] = [];
const skipped: { cpu: number; wall: number }[] = [];
const bridge: number[] = [];
for (let i = 0; i < RUNS; i++) {
  baseline.push(cpuOf(python, IMPORTS));
  skipped.push(cpuOf(python, `${IMPORTS}; import os; os._exit(0)`));
  bridge.push(await resultToExit(python));
}
const f = (x: number) => `${x.toFixed(2)} s`;
const cpuBase = median(baseline.map((r) => r.cpu));
const cpuSkip = median(skipped.map((r) => r.cpu));
console.log(`command: npx tsx bench/bridge-exit.ts --runs ${RUNS}   (${availableParallelism()} cores, ${python})`);
console.log(`  ordinary exit: ${f(cpuBase)} CPU, ${f(median(baseline.map((r) => r.wall)))} wall`);
console.log(`  os._exit:      ${f(cpuSkip)} CPU, ${f(median(skipped.map((r) => r.wall)))} wall`);
console.log(
  `  teardown: ${f(cpuBase - cpuSkip)} CPU per bridge process (${((cpuSkip / cpuBase) * 100).toFixed(0)}% of the baseline's CPU left)`,
);
console.log(`  the bridge, result event to exit: ${f(median(bridge))} (median of ${RUNS})`);
