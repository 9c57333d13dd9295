// The zoo's pieces that need no Python: its lock pins what requirements-zoo.in
// asks for, every pin with a hash (pip --require-hashes), nothing the managed
// lock already pins (the zoo folder must never shadow torch, numpy, ...); and
// the reading of verify's `reference` comparison the real suite asserts on.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normaliseDistName, parseLock } from '../src/pyenv/lock-file.js';
import { cell, referenceOf } from '../scripts/zoo-steps.js';
import { REPO } from './helpers/bridge.js';

const bridge = join(REPO, 'python-bridge');
const zooLock = readFileSync(join(bridge, 'requirements-zoo.lock'), 'utf8');
/** `name==version \` then `--hash=sha256:...` lines, joined. */
const entries = zooLock
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.replace(/#.*/, '').trim())
  .filter((l) => l !== '')
  .map((l) => {
    const [pin, ...hashes] = l.split(/\s+/);
    const [name, version] = pin.split('==');
    return { name: normaliseDistName(name), version, hashes };
  });

describe('requirements-zoo.lock', () => {
  it('pins exactly what requirements-zoo.in asks for', () => {
    const wanted = parseLock(readFileSync(join(bridge, 'requirements-zoo.in'), 'utf8'), 'requirements-zoo.in');
    for (const [name, version] of wanted) expect(entries.find((e) => e.name === name)?.version, name).toBe(version);
  });

  it('gives every pin at least one sha256, and pins nothing the managed lock pins', () => {
    const managed = parseLock(readFileSync(join(bridge, 'requirements.lock'), 'utf8'), 'requirements.lock');
    expect(entries.length).toBeGreaterThan(1);
    for (const e of entries) {
      expect(e.version, e.name).toMatch(/^[0-9][A-Za-z0-9.+!_-]*$/);
      expect(e.hashes.length, e.name).toBeGreaterThan(0);
      for (const h of e.hashes) expect(h, e.name).toMatch(/^--hash=sha256:[0-9a-f]{64}$/);
      expect(managed.has(e.name), `${e.name} is in requirements.lock too`).toBe(false);
    }
    expect(entries.some((e) => e.name === 'torch')).toBe(false);
  });
});

describe("reading verify --json's comparison with eager PyTorch", () => {
  it('takes the largest max_abs* anywhere under reference, counting comparisons', () => {
    const json = {
      ok: true,
      reference: {
        status: 'compared',
        file: 'm.pte.reference.json',
        runs: [
          { run: 'staged', outputs: [{ method: 'forward', output: 0, max_abs: 2e-6, max_rel: 1e-5 }] },
          { run: 'zero-copy', outputs: [{ method: 'forward', output: 0, max_abs_error: 3e-6 }] },
        ],
      },
    };
    expect(referenceOf(JSON.stringify(json))).toEqual({
      present: true,
      status: 'compared',
      file: 'm.pte.reference.json',
      maxAbs: 3e-6,
      comparisons: 2,
    });
  });

  it('says absent for no reference member, and for output that is not JSON', () => {
    const absent = { present: false, status: null, file: null, maxAbs: null, comparisons: 0 };
    expect(referenceOf('{"ok":true}')).toEqual(absent);
    expect(referenceOf('verified: 3 checks passed')).toEqual(absent);
    // Compared with nothing: the member is there, with no file.
    expect(referenceOf('{"reference":{"status":"none","file":null,"comparisons":[]}}')).toMatchObject({
      present: true,
      status: 'none',
      file: null,
    });
  });

  it('renders a step as ok, its refusal code, its exit status, or not run', () => {
    const step = { args: [], seconds: 1, stdout: '', stderr: '' };
    expect(cell({ ...step, exitCode: 0, code: null })).toBe('ok');
    expect(cell({ ...step, exitCode: 1, code: 'BRIDGE_LOWER' })).toBe('`BRIDGE_LOWER`');
    expect(cell({ ...step, exitCode: 3, code: null })).toBe('exit 3');
    expect(cell(undefined)).toBe('-');
  });
});
