// The "Results" table of docs/zoo.md: every zoo model through the user's four steps
// (scripts/zoo-steps.ts), one row each: model, architecture, parameters, the
// result of export / check / rewrite --zero-copy-kv / verify --zero-copy-kv
// (ok, or the code that refused), and verify's largest absolute error against
// eager PyTorch. Runs the steps itself in a temporary folder, or reads the
// results the test/real-zoo-*.test.ts files wrote (TRTX_ZOO_RESULTS=FILE: one
// file per group beside FILE, each given with --from).
//
//   npm run zoo:table [-- --only hf-llama] [-- --from r.llama-like.json --from r.decoders.json ...] [-- --json runs.json]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureZoo, type ZooManifest } from './zoo-build.js';
import { cell, runZooModel, type ZooRun } from './zoo-steps.js';

function flag(name: string): string[] {
  const out: string[] = [];
  process.argv.forEach((a, i) => {
    if (a === name && process.argv[i + 1]) out.push(process.argv[i + 1]);
  });
  return out;
}

async function results(): Promise<{ manifest: ZooManifest; runs: ZooRun[] }> {
  const from = flag('--from');
  if (from.length > 0) {
    // One file per test/real-zoo-*.test.ts group: the runs of all, in the manifest's order.
    const parts = from.map((f) => JSON.parse(readFileSync(f, 'utf8')) as { manifest: ZooManifest; runs: ZooRun[] });
    const manifest = parts[0].manifest;
    const order = (r: ZooRun) => manifest.models.findIndex((m) => m.name === r.model);
    return { manifest, runs: parts.flatMap((p) => p.runs).sort((a, b) => order(a) - order(b)) };
  }
  const zoo = await ensureZoo({ onProgress: (m) => console.error(m) });
  const only = flag('--only');
  const work = mkdtempSync(join(tmpdir(), 'trtx-zoo-table-'));
  const runs: ZooRun[] = [];
  try {
    for (const model of zoo.manifest.models.filter((m) => only.length === 0 || only.includes(m.name))) {
      console.error(`${model.name}: export, check, rewrite --zero-copy-kv, verify --zero-copy-kv`);
      const run = await runZooModel(zoo.dir, model, join(work, model.name));
      console.error(`  ${(['export', 'check', 'rewrite', 'verify'] as const).map((s) => `${s} ${cell(run.steps[s])}`).join(', ')}`);
      runs.push(run);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { manifest: zoo.manifest, runs };
}

/** verify's largest absolute error against eager PyTorch, or why there is none. */
function error(run: ZooRun): string {
  const verify = run.steps.verify;
  if (!verify) return '-';
  if (!run.reference?.present) return verify.exitCode === 0 ? 'not reported' : '-';
  const both = [run.reference.maxAbs, run.referenceRewritten?.maxAbs ?? null].filter((x): x is number => x !== null);
  return both.length ? Math.max(...both).toExponential(1) : 'not reported';
}

const { manifest, runs } = await results();
const [json] = flag('--json');
if (json) writeFileSync(json, JSON.stringify({ manifest, runs }, null, 2));
const rows = runs.map((run) => {
  const m = manifest.models.find((x) => x.name === run.model)!;
  const s = run.steps;
  return `| \`${m.name}\` | ${m.architecture} | ${m.params.toLocaleString('en-US')} | ${cell(s.export)} | ${cell(s.check)} | ${cell(s.rewrite)} | ${cell(s.verify)} | ${error(run)} |`;
});
console.log(`Models (transformers ${manifest.versions.transformers}, torch ${manifest.versions.torch}; \`npm run zoo:table\`):\n`);
console.log('| model | architecture | params | export | check | rewrite --zero-copy-kv | verify --zero-copy-kv | max abs error vs eager |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const r of rows) console.log(r);
