// The bridge's own Python unit tests (order_copyback_mutations_first on fake
// graph signatures, file sniffing, request parsing), run here because CI runs
// `npm test` only.

import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { PYTHON, REPO } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';

it('python-bridge unit tests pass', () => {
  const bridge = join(REPO, 'python-bridge');
  const run = spawnSync(PYTHON, ['-m', 'unittest', 'discover', '-s', join(bridge, 'tests'), '-t', join(bridge, 'tests'), '-v'], {
    cwd: bridge,
    env: { ...process.env, PYTHONPATH: bridge, PYTHONDONTWRITEBYTECODE: '1' },
    encoding: 'utf8',
  });
  const output = `${run.stdout}\n${run.stderr}`;
  expect(run.status, output).toBe(0);
  expect(output).toMatch(/\nOK\b/);
  const ran = Number(/Ran (\d+) tests?/.exec(output)?.[1] ?? 0);
  expect(ran, output).toBeGreaterThanOrEqual(25);
  // The reorder's own tests must be among them, not just collected elsewhere.
  expect(output).toMatch(/test_after_the_reorder_the_write_back_pairs_every_buffer_with_itself .* ok/);
});

it('the probe tool prints the signature of an archive (against the doubles; the lead runs it on real torch)', () => {
  const dir = tempDir('probe');
  execFileSync(PYTHON, [join(REPO, 'test', 'doubles', 'make_archives.py'), dir]);
  const run = spawnSync(PYTHON, [join(REPO, 'python-bridge', 'tools', 'probe_exported_program.py'), join(dir, 'model.pt2')], {
    env: { ...process.env, PYTHONPATH: join(REPO, 'test', 'doubles', 'python'), PYTHONDONTWRITEBYTECODE: '1' },
    encoding: 'utf8',
  });
  expect(run.status, run.stderr).toBe(0);
  const report = JSON.parse(run.stdout) as Record<string, any>;
  expect(report.sniffed.kind).toBe('exported_program');
  expect(report.signature.user_inputs).toEqual(['x']);
  expect(report.example_inputs).toEqual([[{ shape: [1, 4], dtype: 'torch.float32', device: 'cpu' }], {}]);
  expect(report.copyback_plan).toMatchObject({ predicate: 'executorch', would_move: 0 });
});
