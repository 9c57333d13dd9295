// Programs finalized the way Torch-TensorRT documents it (`edge.to_executorch()`,
// ExecuTorch's default emit_mutable_buffer_names=False) carry no
// fully_qualified_name on their mutable buffers. The zero-copy rewrite and its
// checks find the caches by structure (write-backs in the staged program, the
// engines' in-place updates in the zero-copy one), not by name.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import type { Program } from '../src/pte/model.js';
import { withPte } from '../src/pte/open.js';
import { aliasEdgesOf, mutableBuffers, updatedInPlaceOnly } from '../src/graph/dataflow.js';
import { aliasedOutputs } from '../src/tensorrt/blob.js';
import { delegatesOf, isTensorRT, readDelegateBlob } from '../src/tensorrt/delegates.js';
import { runCli } from './helpers/cli.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { verifyProgram } from '../src/verify/verify.js';
import { rewrite } from './helpers/diff-files.js';
import { staged } from './helpers/zero-copy-shapes.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('zero-copy-unnamed');

/** Drops every fully_qualified_name, as ExecuTorch writes without emit_mutable_buffer_names; `to` '' writes the field empty instead. */
function unnameAs(to: string | null): (p: Program) => void {
  return (p) => {
    for (const plan of p.executionPlan)
      for (const v of plan.values) if (v.type === 'Tensor' && v.tensor.extraTensorInfo) v.tensor.extraTensorInfo.fullyQualifiedName = to;
  };
}

async function unnamedStaged(as: string | null = null): Promise<string> {
  const named = join(dir, 'named.pte');
  await writeFixture(named, staged());
  return rewrite(named, join(dir, as === null ? 'unnamed.pte' : 'empty-names.pte'), unnameAs(as));
}

describe('zero-copy KV on programs without buffer names', () => {
  it('rewrites an unnamed staged program, and the zero-copy result passes check --zero-copy-kv', async () => {
    const input = await unnamedStaged();
    const o = join(dir, 'unnamed.zc.pte');
    const r = await runCli(['rewrite', input, '-o', o, '--zero-copy-kv']);
    expect(r.stderr).not.toMatch(/ZC_NOT_A_BUFFER/);
    expect(r.code).toBe(0);
    // Unnamed caches are named by their value.
    expect(r.stdout).toMatch(/fed its caches directly \(%\d+, %\d+, %\d+, %\d+\)/);
    const check = await runCli(['check', o, '--zero-copy-kv', '--json']);
    expect(check.code).toBe(0);
    const report = JSON.parse(check.stdout);
    expect(report.ok).toBe(true);
    // The uninitialised-device-state warning still sees the unnamed caches.
    expect(report.diagnostics.map((d: { code: string }) => d.code)).toContain('RT_DEVICE_STATE_UNINITIALIZED');
  });

  it('takes an empty fully_qualified_name for no name: the rewrite and its check go as on the unnamed program', async () => {
    const results = [];
    for (const as of [null, '']) {
      const input = await unnamedStaged(as);
      const o = join(dir, `as-${as === null ? 'absent' : 'empty'}.zc.pte`);
      const r = await runCli(['rewrite', input, '-o', o, '--zero-copy-kv']);
      const check = await runCli(['check', o, '--zero-copy-kv', '--json']);
      const codes = (JSON.parse(check.stdout) as { diagnostics: { code: string }[] }).diagnostics.map((d) => d.code);
      results.push({
        code: r.code,
        stderr: r.stderr.replace(/^\S+Z /gm, ''),
        stdout: r.stdout.replaceAll(input, 'IN').replaceAll(o, 'OUT'),
        check: check.code,
        codes,
      });
    }
    // An empty name read as a name made every cache "the same" one: ZC_SWAPPED_CACHE.
    expect(results[1].stderr).not.toMatch(/ZC_SWAPPED_CACHE/);
    expect(results[1]).toEqual(results[0]);
    expect(results[0].code).toBe(0);
  });

  it('recognises a cache only engines update in place, never a value anything else reads or writes', async () => {
    const input = await unnamedStaged();
    const o = join(dir, 'structure.zc.pte');
    expect((await runCli(['rewrite', input, '-o', o, '--zero-copy-kv'])).code).toBe(0);
    await withPte(o, async (pte) => {
      const plan = pte.program.executionPlan.findIndex((p) => p.name === 'decode');
      const p = pte.program.executionPlan[plan];
      const edges = [];
      for (const ref of delegatesOf(pte, isTensorRT).filter((r) => r.planIndex === plan)) {
        const meta = (await readDelegateBlob(pte, ref)).metadata;
        edges.push(...aliasEdgesOf(p, ref.delegateIndex, meta, new Set(aliasedOutputs(meta).map((x) => x.name))));
      }
      // Without names and write-backs, nothing but the structure identifies them.
      expect(mutableBuffers(p).size).toBe(0);
      const found = updatedInPlaceOnly(p, edges);
      expect(found.size).toBe(4);
      expect([...mutableBuffers(p, edges)].sort()).toEqual([...found].sort());
      // A value another instruction also references is not a buffer by structure.
      const first = [...found][0];
      const call = p.chains[0].instructions.find((i) => i.type === 'DelegateCall');
      if (call?.type !== 'DelegateCall') throw new Error('no delegate call');
      call.args.push(first);
      expect(updatedInPlaceOnly(p, edges).has(first)).toBe(false);
    });
  });

  it(
    'verify --zero-copy-kv runs it through a copy naming its buffers after the engine inputs they feed, and proves the contract',
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      const input = await unnamedStaged();
      const r = await verifyProgram(input, { zeroCopyKv: true, steps: 3, callerStream: 'off', runner: await testRunner() });
      expect(r.mode).toBe('staged-vs-zero-copy');
      // The caches by the bindings they feed, the same in the staged program and its twin.
      expect(r.caches.sort()).toEqual([
        'b_layers_0_attn_k_cache',
        'b_layers_0_attn_v_cache',
        'b_layers_1_attn_k_cache',
        'b_layers_1_attn_v_cache',
      ]);
      expect(r.notes.join('\n')).toMatch(/carry no names .* the runner ran a copy naming them after the engine inputs they feed/);
      const failed = r.assertions.filter((a) => !a.ok);
      expect(failed, JSON.stringify(failed)).toEqual([]);
      expect(r.assertions.map((a) => a.name)).toContain('every cache changes at every step: zero-copy (stream off)');
    },
  );
});
