// verify on methods that share state (ExecuTorch's share_mutable_buffers): a
// method that only reads a buffer another method writes is checked for
// reading what the writer wrote, not for keeping state of its own.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { verifyProgram } from '../src/verify/verify.js';
import { withPte } from '../src/pte/open.js';
import { stateRoles } from '../src/verify/state-roles.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';
import { stateReadElsewhere } from './helpers/zero-copy-shapes.js';

const dir = tempDir('verify-shared-state');

describe('verify: a reader of state another method writes', () => {
  it('classifies set as the writer and get as a reader of its state', async () => {
    const file = join(dir, 'roles.pte');
    await writeFixture(file, stateReadElsewhere());
    const roles = await withPte(file, (p) => stateRoles(p, ['get', 'set']));
    expect(roles.shared).toBe(true);
    expect(roles.methods.get('set')).toEqual({ writes: ['state'], reads: [], readsFrom: [] });
    expect(roles.methods.get('get')).toEqual({ writes: [], reads: ['state'], readsFrom: [{ buffer: 'state', writers: ['set'] }] });
    // Alone, get shares nothing: nobody it runs with writes its buffer.
    expect((await withPte(file, (p) => stateRoles(p, ['get']))).shared).toBe(false);
  });

  it(
    'passes get/set run in one loaded program, arenas shared, and checks get read what set wrote',
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      const file = join(dir, 'get-set.pte');
      await writeFixture(file, stateReadElsewhere());
      const r = await verifyProgram(file, { steps: 3, callerStream: 'off', runner: await testRunner() });
      expect(r.check.refused).toBe(false);
      expect(r.assertions.filter((a) => !a.ok)).toEqual([]);
      expect(r.ok).toBe(true);
      const reads = r.assertions.find((a) => a.name.startsWith('get reads what set wrote to state'))!;
      // Step 0: get runs before set has written anything; steps 1 and 2 read set's writes.
      expect(reads).toMatchObject({ ok: true, detail: "outputs differ from a fresh load's at 2 of 3 step(s)" });
      // Neither method keeps state of its own: nothing asks set's or get's steps to see their previous step.
      expect(r.assertions.some((a) => a.name.startsWith('each step sees what the previous one wrote'))).toBe(false);
      expect(r.notes.join('\n')).toMatch(/get, set share mutable buffers .*share_memory_arenas=true/);
    },
  );
});
