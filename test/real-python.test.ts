// The bridge's Python suites that need the real torch and ExecuTorch
// (python-bridge/tests_real), run in trtx's managed environment: the
// copy-back ordering against ExecuTorch's own insert_write_back_for_buffers_pass,
// and the reference lowering on programs torch.export and ExecuTorch made
// (version 3 engines, half precision).
import { execa } from 'execa';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { bridgeEnv, bridgePackageDir } from '../src/bridge/env.js';
import { ensureManagedEnv } from '../src/pyenv/managed.js';

it('python-bridge/tests_real pass against ExecuTorch 1.5', { timeout: 900_000 }, async () => {
  const env = await ensureManagedEnv({
    env: process.env,
    onProgress: (p) => p.phase !== 'cached' && process.stderr.write(`[python env] ${p.message}\n`),
  });
  const bridge = bridgePackageDir();
  const run = await execa(
    env.python,
    ['-m', 'unittest', 'discover', '-s', join(bridge, 'tests_real'), '-t', join(bridge, 'tests_real'), '-v'],
    {
      cwd: bridge,
      env: { ...bridgeEnv({ base: process.env }), PYTHONWARNINGS: 'ignore' },
      extendEnv: false,
      reject: false,
      all: true,
    },
  );
  const output = String(run.all);
  expect(run.exitCode, output.slice(-4000)).toBe(0);
  expect(output).toMatch(/\nOK\b/);
  expect(Number(/Ran (\d+) tests?/.exec(output)?.[1] ?? 0), output).toBeGreaterThanOrEqual(26);
  // The ordering's real test is among them, and ran (a failure shows as FAIL:/ERROR: and a non-zero exit).
  expect(output).not.toMatch(/^(FAIL|ERROR): /m);
  for (const name of [
    'test_rewired_caches_cross_the_map_without_the_ordering',
    'test_ordering_copy_backs_first_makes_the_real_write_back_pair_correctly',
    'test_a_one_position_index_copy_is_a_kv_cache_update_written_in_place',
    'test_the_serializer_writes_torch_tensorrts_layout',
    // Reference engine version 3: weights in the outer program's named data, one entry per key.
    'test_the_engine_is_version_3_its_weights_are_named_data_and_its_program_computes_the_partition',
    'test_a_weight_two_engines_use_is_one_named_data_entry',
    // Half-precision decoders run on ExecuTorch's CPU kernels as in eager.
    'test_a_half_precision_llama_block_runs_on_executorchs_kernels_as_in_eager',
  ]) {
    expect(output).toContain(`${name} (`);
  }
});
