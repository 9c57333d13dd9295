// A runner fuzzing campaign from the command line, one JSON line per run (each mutant in both verification modes)
// (what test/runner-fuzz.test.ts asserts, for campaigns longer than a test):
//   npx tsx test/helpers/runner-fuzz-campaign.ts SEED COUNT [RUNNER]
// RUNNER defaults to $TRTX_RUNNER_BIN; it should be the ASan+UBSan build
// (.ci/run makes native-runner/build-ci/trtx-runner). The last line sums up.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fuzzSeeds } from './fuzz.js';
import { hostileSeeds } from './hostile-seeds.js';
import { fuzzRunnerOnce, isFinding, VERIFICATIONS } from './runner-fuzz.js';

const seed = Number(process.argv[2] ?? 19);
const count = Number(process.argv[3] ?? 300);
const runner = process.argv[4] ?? process.env.TRTX_RUNNER_BIN;
if (!runner) {
  process.stderr.write('usage: runner-fuzz-campaign.ts SEED COUNT [RUNNER] (or set TRTX_RUNNER_BIN)\n');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'trtx-runner-campaign-'));
let findings = 0;
let insideExecutorch = 0;
let maxMs = 0;
try {
  const seeds = [...fuzzSeeds(), ...hostileSeeds()];
  for (let i = 0; i < count; i++) {
    for (const r of await fuzzRunnerOnce({ runner, seed, dir }, i, seeds)) {
      if (isFinding(r)) findings++;
      if (isFinding(r) && r.insideExecutorch) insideExecutorch++;
      maxMs = Math.max(maxMs, r.ms);
      process.stdout.write(JSON.stringify(r) + '\n');
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(
  JSON.stringify({ seed, count, findings, runs: count * VERIFICATIONS.length, findingsInsideExecutorch: insideExecutorch, maxMs }) + '\n',
);
process.exitCode = findings === 0 ? 0 : 1;
