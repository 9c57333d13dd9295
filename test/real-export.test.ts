// trtx export with real torch and ExecuTorch (trtx's managed environment): the
// user's three lines end to end with the reference lowering, the default
// engine's refusal where Torch-TensorRT is missing, and the demo that starts
// from PyTorch.
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RealCorpus } from '../scripts/corpus/build.js';
import { withPte } from '../src/pte/open.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { blobPlace, delegatesOf, isTensorRT, readDelegateBlob } from '../src/tensorrt/delegates.js';
import { decodeEngine } from '../src/tensorrt/standin-engine.js';
import { CORPUS_TIMEOUT_MS, file, realCorpus } from './helpers/real-corpus.js';
import { runCli } from './helpers/cli.js';
import { REPO } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';

const EXPORT_MS = 300_000;

let corpus: RealCorpus;
let dir: string;
beforeAll(async () => {
  corpus = await realCorpus();
  dir = tempDir('real-export');
}, CORPUS_TIMEOUT_MS);

// As a user runs it: the command typed in a shell's working folder (the
// command line in process, that folder the user's: helpers/cli.ts), with no
// TRTX_PYTHON, so that trtx's managed environment runs the export.
const trtx = async (args: string[], cwd: string) => {
  const r = await runCli(args, { cwd, env: { TRTX_PYTHON: undefined, NO_COLOR: '1' } });
  return { exitCode: r.code, stdout: r.stdout, stderr: r.stderr };
};

describe("the user's three lines, with the reference lowering", () => {
  it(
    'trtx export model.pt --budget 8GiB --engine reference; trtx check model.pte; trtx verify --zero-copy-kv model.pte',
    { timeout: EXPORT_MS },
    async () => {
      const work = join(dir, 'three-lines');
      rmSync(work, { recursive: true, force: true });
      freshDir(work);
      // model.pt: the decoder's decode step saved with torch.export.save.
      copyFileSync(file(corpus, corpus.manifest.archive.file), join(work, 'model.pt'));

      const exported = await trtx(['export', 'model.pt', '--budget', '8GiB', '--engine', 'reference'], work);
      expect(exported.exitCode, exported.stderr).toBe(0);
      expect(exported.stdout).toMatch(/^wrote .*model\.pte/m);
      expect(exported.stdout).toMatch(/trtx reference engines/);
      // No --python, no TRTX_PYTHON: trtx's managed environment ran the export.
      expect(exported.stdout).toMatch(/python 3\.\d+\.\d+ \(managed\): torch 2\.13\.0/);
      expect(existsSync(join(work, 'model.pte'))).toBe(true);
      // --budget built the engine for weight streaming and baked the budget, as Torch-TensorRT does.
      await withPte(join(work, 'model.pte'), async (pte) => {
        const [r] = delegatesOf(pte, isTensorRT);
        const blob = await readDelegateBlob(pte, r);
        const engine = decodeEngine(await pte.readRange(blobPlace(pte, r).fileOffset! + blob.engineOffset, Number(blob.engineSize)));
        expect(engine.weightStreaming).toBe(true);
        expect(decodeCompileSpecs(r.delegate.compileSpecs).specs.weightStreamingBudget).toBe(8n << 30n);
      });

      const checked = await trtx(['check', 'model.pte'], work);
      expect(checked.exitCode, checked.stdout).toBe(0);
      // 8 GiB holds every weight of this small model: check says the budget streams nothing (a warning, exit 0).
      expect(checked.stdout).toMatch(/^model\.pte: checked/);
      expect(checked.stdout).toMatch(/TRT_BUDGET_STREAMS_NOTHING/);
      expect(checked.stdout).toMatch(/^0 errors, 1 warning$/m);
      expect(checked.stdout).toMatch(/holds a trtx reference engine, not a TensorRT plan/);

      const verified = await trtx(['verify', '--zero-copy-kv', 'model.pte'], work);
      expect(verified.exitCode, verified.stdout + verified.stderr).toBe(0);
      expect(verified.stdout).toMatch(/staged-vs-zero-copy/);
      expect(verified.stdout).toMatch(/^verified: \d+ checks passed/m);
      // Nothing but the model, the program and its reference outputs are left in the folder.
      expect(exported.stdout).toMatch(/^ {2}reference: .*model\.pte\.reference\.json \(eager PyTorch, 5 steps per method/m);
      expect(readdirSync(work).sort()).toEqual(['model.pt', 'model.pte', 'model.pte.reference.json']);
    },
  );
});

describe('a hand-written token-id decoder against eager PyTorch', () => {
  it(
    'exports from a factory, goes zero-copy and matches PyTorch at every step; a program that does not compute the model fails',
    { timeout: EXPORT_MS },
    async () => {
      const work = join(dir, 'token-llama');
      freshDir(work);
      const factory = join(REPO, 'python-bridge', 'corpus', 'token_llama.py');
      const exported = await trtx(
        ['export', `${factory}:make_decoder`, '-o', 'tok.pte', '--engine', 'reference', '--budget', '8GiB'],
        work,
      );
      expect(exported.exitCode, exported.stderr).toBe(0);
      const verified = await trtx(['verify', '--zero-copy-kv', '--json', 'tok.pte'], work);
      expect(verified.exitCode, verified.stdout + verified.stderr).toBe(0);
      const doc = JSON.parse(verified.stdout) as {
        mode: string;
        reference: { status: string; comparisons: { run: string; max_abs: number; steps: number; ok: boolean }[] };
      };
      expect(doc.mode).toBe('staged-vs-zero-copy');
      expect(doc.reference.status).toBe('compared');
      // Staged and zero-copy, caller stream off and on: each within 1e-4 of eager PyTorch at every one of the 5 steps.
      expect(doc.reference.comparisons).toHaveLength(4);
      for (const c of doc.reference.comparisons) expect([c.ok, c.steps, c.max_abs <= 1e-4], c.run).toEqual([true, 5, true]);

      // The same decoder with one weight changed records other outputs: the program computes its own model, so verify fails.
      const other = await trtx(['export', `${factory}:make_decoder_perturbed`, '-o', 'other.pte', '--engine', 'reference'], work);
      expect(other.exitCode, other.stderr).toBe(0);
      const mismatch = await trtx(['verify', 'tok.pte', '--reference', 'other.pte.reference.json'], work);
      expect(mismatch.exitCode).toBe(1);
      expect(mismatch.stdout).toMatch(
        /^ {2}FAIL outputs match eager PyTorch \(other\.pte\.reference\.json\): decode output 0: max abs [0-9.e-]+/m,
      );
      expect(mismatch.stdout).toMatch(/furthest from PyTorch: decode output 0/);
    },
  );
});

describe('trtx export --engine tensorrt (the default) without Torch-TensorRT', () => {
  it(
    'refuses with exit 2, naming what to install and pointing at --engine reference; nothing written',
    { timeout: EXPORT_MS },
    async () => {
      const work = join(dir, 'no-trt');
      freshDir(work);
      copyFileSync(file(corpus, corpus.manifest.archive.file), join(work, 'model.pt'));
      const r = await trtx(['export', 'model.pt', '-o', 'model.pte'], work);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(/^error: BRIDGE_IMPORT_MISSING: .*cannot import torch_tensorrt/m);
      expect(r.stderr).toMatch(/^hint: .*pip install torch-tensorrt.*--engine reference/m);
      // Said before the bridge started: no stage of it ran (the managed environment's probe knows).
      expect(r.stderr).not.toMatch(/trtx info: (check|load|trace) /);
      expect(readdirSync(work)).toEqual(['model.pt']);
    },
  );
});

describe('trtx demo --from-pytorch', () => {
  it(
    'exports the bundled decoder with ExecuTorch, rewrites, checks and verifies it, with progress on every stage',
    { timeout: EXPORT_MS },
    async () => {
      const out = join(dir, 'demo');
      const r = await trtx(['demo', '--from-pytorch', '--out', out, '--json'], dir);
      expect(r.exitCode, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout);
      expect(doc).toMatchObject({ schema: 'trtx.demo/1', source: 'pytorch', ok: true, check: { errors: 0 } });
      expect(doc.verify.engines).toMatchObject({ tensorrt: 0, reference: 2, synthetic: 0, unknown: 0 }); // prefill and decode, each the partition's own program
      expect(doc.verify.mode).toBe('staged-vs-zero-copy');
      expect(doc.staging.after.h2d).toBeLessThan(doc.staging.before.h2d);
      // One log line per stage (whatever the log format), in order.
      const order = [
        /exporting the bundled PyTorch decoder/,
        /export lower: .*reference partitioner/,
        /export finalize: to_executorch/,
        /rewriting: /,
        /checking(?! the finalized)/,
        /verifying in the reference runner/,
      ];
      const at = order.map((stage) => r.stderr.search(stage));
      expect(
        at.every((i) => i >= 0),
        r.stderr,
      ).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
    },
  );
});

function freshDir(path: string): void {
  rmSync(path, { recursive: true, force: true });
  mkdirSync(path, { recursive: true });
}
